-- Puts checkpointed seats back (hot/league.h) after Redis lost them: each seat unless the
-- member has one, and each division's fill raised to at least the places restored, so a later
-- seat never takes a restored member's place.
-- KEYS[1] the period's :meta, KEYS[2] its :seats. ARGV[1] the period's expiry (ms), then
-- member, seat pairs. Returns the seats added.
local added = 0
for i = 2, #ARGV, 2 do
  added = added + redis.call('ZADD', KEYS[2], 'NX', ARGV[i + 1], ARGV[i])
  local s = tonumber(ARGV[i + 1])
  local d = math.floor(s / 4294967296)
  local place = s - d * 4294967296
  local field = 'fill:' .. string.format('%d', d)
  if tonumber(redis.call('HGET', KEYS[1], field) or '0') < place then
    redis.call('HSET', KEYS[1], field, string.format('%d', place))
  end
end
for _, k in ipairs({KEYS[1], KEYS[2]}) do
  if redis.call('EXISTS', k) == 1 and redis.call('PTTL', k) == -1 then
    redis.call('PEXPIREAT', k, ARGV[1])
  end
end
return added
