-- A member and up to K neighbours on each side, in listing order, with the competition rank
-- of the first entry, read atomically.
-- KEYS[1] the live ZSET, KEYS[2] its meta HASH, KEYS[3] the board's sync marker.
-- ARGV: member K check_synced ("1": an unsynced board counts as spilled).
-- Returns {"spilled"} when the period has spilled (the caller reads both tiers instead),
-- else {first_rank, position_of_first, member, score, ...} or {} when the member is absent.
if redis.call('HGET', KEYS[2], 'spilled') == '1' then return {'spilled'} end
-- A board not synced with the cold tier (Redis may have lost what spilled): read both tiers.
if ARGV[#ARGV] == '1' and redis.call('EXISTS', KEYS[3]) == 0 then return {'spilled'} end
local pos = redis.call('ZRANK', KEYS[1], ARGV[1])
if not pos then return {} end
local k = tonumber(ARGV[2])
local from = pos - k
if from < 0 then from = 0 end
local entries = redis.call('ZRANGE', KEYS[1], from, pos + k, 'WITHSCORES')
local better = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. entries[2])
local out = {better + 1, from}
for i = 1, #entries do out[#out + 1] = entries[i] end
return out
