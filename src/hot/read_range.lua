-- A slice of one board in listing order, with the competition rank of its first entry.
-- KEYS[1] the live ZSET, KEYS[2] its meta HASH. ARGV: start stop (0-based, inclusive).
-- Returns {"spilled"} when the period has spilled (the caller reads both tiers instead),
-- else {first_rank, member, score, ...} or {} when the slice is empty.
if redis.call('HGET', KEYS[2], 'spilled') == '1' then return {'spilled'} end
local entries = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
if #entries == 0 then return {} end
local better = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. entries[2])
local out = {better + 1}
for i = 1, #entries do out[#out + 1] = entries[i] end
return out
