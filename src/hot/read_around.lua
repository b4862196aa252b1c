-- A member and up to K neighbours on each side, in listing order, with the competition rank
-- of the first entry, read atomically.
-- KEYS[1] the live ZSET, KEYS[2] its meta HASH, KEYS[3] the board's sync marker.
-- ARGV: member K check_synced ("1": an unsynced board counts as spilled).
-- Returns {"spilled"} when the cold tier is needed (the caller reads both tiers instead),
-- else {first_rank, position_of_first, member, score, ...} or {} when the member is absent. A
-- spilled period is answered here when the member and K members after it are hot and scored
-- below meta cold_bound (see spill_remove.lua): listed before every cold member.
local meta = redis.call('HMGET', KEYS[2], 'spilled', 'cold_bound')
-- A board not synced with the cold tier (Redis may have lost what spilled): read both tiers.
if ARGV[#ARGV] == '1' and redis.call('EXISTS', KEYS[3]) == 0 then return {'spilled'} end
if meta[1] == '1' and not meta[2] then return {'spilled'} end
local pos = redis.call('ZRANK', KEYS[1], ARGV[1])
if not pos then
  if meta[1] == '1' then return {'spilled'} end  -- it may be cold
  return {}
end
local k = tonumber(ARGV[2])
local from = pos - k
if from < 0 then from = 0 end
local entries = redis.call('ZRANGE', KEYS[1], from, pos + k, 'WITHSCORES')
if meta[1] == '1' and (#entries < 2 * (pos + k - from + 1) or
                       tonumber(entries[#entries]) >= tonumber(meta[2])) then
  return {'spilled'}
end
local better = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. entries[2])
local out = {better + 1, from}
for i = 1, #entries do out[#out + 1] = entries[i] end
return out
