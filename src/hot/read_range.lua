-- A slice of one board in listing order, with the competition rank of its first entry.
-- KEYS[1] the live ZSET, KEYS[2] its meta HASH, KEYS[3] the board's sync marker.
-- ARGV: start stop (0-based, inclusive) check_synced ("1": an unsynced board counts as spilled).
-- Returns {"spilled"} when the cold tier is needed (the caller reads both tiers instead),
-- else {first_rank, member, score, ...} or {} when the slice is empty. A spilled period is
-- answered here when every position asked for is hot and scored below meta cold_bound (see
-- spill_remove.lua): listed before every cold member.
local meta = redis.call('HMGET', KEYS[2], 'spilled', 'cold_bound')
-- A board not synced with the cold tier (Redis may have lost what spilled): read both tiers.
if ARGV[#ARGV] == '1' and redis.call('EXISTS', KEYS[3]) == 0 then return {'spilled'} end
if meta[1] == '1' and not meta[2] then return {'spilled'} end
local entries = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
if meta[1] == '1' and (#entries < 2 * (tonumber(ARGV[2]) - tonumber(ARGV[1]) + 1) or
                       tonumber(entries[#entries]) >= tonumber(meta[2])) then
  return {'spilled'}
end
if #entries == 0 then return {} end
local better = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. entries[2])
local out = {better + 1}
for i = 1, #entries do out[#out + 1] = entries[i] end
return out
