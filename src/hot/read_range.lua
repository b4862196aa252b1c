-- A slice of one board in listing order, with the competition rank of its first entry.
-- KEYS[1] the live ZSET, KEYS[2] its meta HASH, KEYS[3] the board's sync marker.
-- ARGV: start stop (0-based, inclusive) check_synced ("1": an unsynced board counts as spilled).
-- Returns {"spilled"} when the period has spilled (the caller reads both tiers instead),
-- else {first_rank, member, score, ...} or {} when the slice is empty.
if redis.call('HGET', KEYS[2], 'spilled') == '1' then return {'spilled'} end
-- A board not synced with the cold tier (Redis may have lost what spilled): read both tiers.
if ARGV[#ARGV] == '1' and redis.call('EXISTS', KEYS[3]) == 0 then return {'spilled'} end
local entries = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
if #entries == 0 then return {} end
local better = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. entries[2])
local out = {better + 1}
for i = 1, #entries do out[#out + 1] = entries[i] end
return out
