-- Opens a league period's cohorts (hot/league.h): seats up to ARGV[3] waiting members in the
-- order of their first event (ms, then member bytes), each in its division's filling cohort as
-- update_league.lua seats; once no member waits, writes :meta "league" = ARGV[1], after which
-- update.lua seats members itself. Atomic, so a member seated here and one seated by an update
-- never share a place.
-- KEYS[1] the period's :meta, KEYS[2] its :seats, KEYS[3] its :waiting, KEYS[4] the board's
-- :divisions. ARGV[1] the close count the divisions cache must carry, ARGV[2] the start
-- division's index, ARGV[3] at most this many seated per call, ARGV[4] the period's expiry (ms).
-- Returns {1 when open, members seated}, or -1 when the divisions cache is not at ARGV[1].
if redis.call('HGET', KEYS[4], '') ~= ARGV[1] then return -1 end
local batch = redis.call('ZRANGE', KEYS[3], 0, tonumber(ARGV[3]) - 1)
local seated = 0
for _, m in ipairs(batch) do
  if not redis.call('ZSCORE', KEYS[2], m) then
    local d = redis.call('HGET', KEYS[4], m) or ARGV[2]
    local place = redis.call('HINCRBY', KEYS[1], 'fill:' .. d, 1)
    redis.call('ZADD', KEYS[2], string.format('%d', d * 4294967296 + place), m)
    seated = seated + 1
  end
end
for i = 1, #batch, 1000 do
  redis.call('ZREM', KEYS[3], unpack(batch, i, math.min(i + 999, #batch)))
end
local open = redis.call('ZCARD', KEYS[3]) == 0
if open then redis.call('HSET', KEYS[1], 'league', ARGV[1]) end
for _, k in ipairs({KEYS[1], KEYS[2]}) do
  if redis.call('PTTL', k) == -1 then redis.call('PEXPIREAT', k, ARGV[4]) end
end
return {open and 1 or 0, seated}
