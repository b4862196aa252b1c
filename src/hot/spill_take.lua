-- Spill, step 2: the members at positions [start, stop] in listing order, entered in the
-- stale set BEFORE their cold rows are committed, so no read ever counts a member that is
-- hot and cold at once twice.
-- KEYS[1] live ZSET, KEYS[2] stale SET, KEYS[3] meta HASH. ARGV: start stop expire_at_ms.
-- Returns {{member, score, member, score, ...}, flags}; nothing when the period is closed.
-- flags has one character per member: "1" when the member was in the stale set already, so
-- it may have a cold row (an earlier spill that could not remove it, or a rehydration);
-- "0" when it cannot have one: the stale set gains every member before its row is
-- committed and loses it only when the member leaves the hot key.
if redis.call('HGET', KEYS[3], 'closed') == '1' then return {} end
local entries = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
if #entries == 0 then return {} end
local members = {}
for i = 1, #entries, 2 do members[#members + 1] = entries[i] end
local flags = {}
for i = 1, #members, 5000 do
  local last = math.min(i + 4999, #members)
  local known = redis.call('SMISMEMBER', KEYS[2], unpack(members, i, last))
  for k = 1, #known do flags[#flags + 1] = known[k] == 1 and '1' or '0' end
  redis.call('SADD', KEYS[2], unpack(members, i, last))
end
if redis.call('PTTL', KEYS[2]) == -1 then redis.call('PEXPIREAT', KEYS[2], ARGV[3]) end
return {entries, table.concat(flags)}
