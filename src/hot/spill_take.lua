-- Spill, step 2: the members at positions [start, stop] in listing order, entered in the
-- stale set BEFORE their cold rows are committed, so no read ever counts a member that is
-- hot and cold at once twice.
-- KEYS[1] live ZSET, KEYS[2] stale SET, KEYS[3] meta HASH. ARGV: start stop expire_at_ms.
-- Returns {member, score, member, score, ...}; nothing when the period is closed.
if redis.call('HGET', KEYS[3], 'closed') == '1' then return {} end
local entries = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
if #entries == 0 then return entries end
local members = {}
for i = 1, #entries, 2 do members[#members + 1] = entries[i] end
for i = 1, #members, 5000 do
  redis.call('SADD', KEYS[2], unpack(members, i, math.min(i + 4999, #members)))
end
if redis.call('PTTL', KEYS[2]) == -1 then redis.call('PEXPIREAT', KEYS[2], ARGV[3]) end
return entries
