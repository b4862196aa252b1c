-- One member's score and competition rank, and the board's size, read atomically.
-- KEYS[1] the live ZSET, KEYS[2] its meta HASH, KEYS[3] the board's sync marker.
-- ARGV: member check_synced ("1": an unsynced board counts as spilled).
-- Returns {"spilled"} when the cold tier is needed (the caller reads both tiers instead),
-- else {rank, score, size} or {} when absent. A spilled period is answered here when the
-- member is hot and scored below meta cold_bound (see spill_remove.lua): listed before every
-- cold member, so its rank counts hot members only.
local meta = redis.call('HMGET', KEYS[2], 'spilled', 'cold_bound')
-- A board not synced with the cold tier (Redis may have lost what spilled): read both tiers.
if ARGV[#ARGV] == '1' and redis.call('EXISTS', KEYS[3]) == 0 then return {'spilled'} end
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if meta[1] == '1' and not (score and meta[2] and tonumber(score) < tonumber(meta[2])) then
  return {'spilled'}
end
if not score then return {} end
local better = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. score)
return {better + 1, score, redis.call('ZCARD', KEYS[1])}
