-- One cohort of a league period (hot/league.h): its members and their scores, read atomically.
-- KEYS[1] the period's :seats, KEYS[2] its live ZSET. ARGV[1] "m": the cohort of member
-- ARGV[2]; "c": cohort ARGV[3] of division ARGV[2]. ARGV[4] the cohort size.
-- Returns {division, cohort number, members, their encoded scores (false: not ranked, e.g.
-- removed)}, or {} when the member has no seat.
local size = tonumber(ARGV[4])
local d, n
if ARGV[1] == 'm' then
  local s = redis.call('ZSCORE', KEYS[1], ARGV[2])
  if not s then return {} end
  s = tonumber(s)
  d = math.floor(s / 4294967296)
  n = math.floor((s - d * 4294967296 - 1) / size) + 1
else
  d, n = tonumber(ARGV[2]), tonumber(ARGV[3])
end
local lo = d * 4294967296 + (n - 1) * size + 1
local members = redis.call('ZRANGEBYSCORE', KEYS[1], string.format('%d', lo),
                           string.format('%d', lo + size - 1))
local scores = {}
if #members > 0 then scores = redis.call('ZMSCORE', KEYS[2], unpack(members)) end
return {d, n, members, scores}
