-- A member and up to K neighbours on each side, in listing order, with the competition rank
-- of the first entry, read atomically.
-- KEYS[1] the live ZSET. ARGV: member K.
-- Returns {first_rank, position_of_first, member, score, ...} or {} when the member is absent.
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
