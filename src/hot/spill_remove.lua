-- Spill, step 3 (after the cold rows are committed): remove each member from the hot key
-- only if its score is still the one that was spilled. A member updated meanwhile stays hot
-- (and in the stale set: its cold row is outdated and the hot value wins). Removing anyone
-- bumps the period's spill generation, which tells a concurrent rehydrating writer that its
-- cold look-up may be out of date.
-- A writer that kept losing the race to a busy spill may hold the period for a moment (meta
-- hold_until): then nothing is removed (the members stay hot for the next tick) and -1 is
-- returned.
-- KEYS[1] live ZSET, KEYS[2] stale SET, KEYS[3] meta HASH.
-- ARGV: start (the position the members were taken from), then member score member score ...
-- Returns how many were removed, or -1 when held.
if redis.call('HGET', KEYS[3], 'closed') == '1' then return -1 end  -- being archived
local hold_until = redis.call('HGET', KEYS[3], 'hold_until')
if hold_until then
  local t = redis.call('TIME')
  if tonumber(hold_until) > tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then
    return -1
  end
end
local start = tonumber(ARGV[1])
local n = (#ARGV - 1) / 2
local removed = 0
-- The common case: nobody wrote to the board meanwhile, so the same positions still hold
-- the same members with the same scores: one range removal instead of one per member.
local now = redis.call('ZRANGE', KEYS[1], start, start + n - 1, 'WITHSCORES')
local same = #now == 2 * n
for i = 1, #now do
  if not same then break end
  local given = ARGV[i + 1]
  same = now[i] == given or (i % 2 == 0 and tonumber(now[i]) == tonumber(given))
end
if same then
  redis.call('ZREMRANGEBYRANK', KEYS[1], start, start + n - 1)
  local members = {}
  for i = 2, #ARGV, 2 do members[#members + 1] = ARGV[i] end
  for i = 1, #members, 5000 do
    redis.call('SREM', KEYS[2], unpack(members, i, math.min(i + 4999, #members)))
  end
  removed = n
else
  for i = 2, #ARGV, 2 do
    local member = ARGV[i]
    local score = redis.call('ZSCORE', KEYS[1], member)
    if score and tonumber(score) == tonumber(ARGV[i + 1]) then
      redis.call('ZREM', KEYS[1], member)
      redis.call('SREM', KEYS[2], member)
      removed = removed + 1
    elseif not score then
      redis.call('SREM', KEYS[2], member)
    end
  end
end
if removed > 0 then redis.call('HINCRBY', KEYS[3], 'gen', 1) end
return removed
