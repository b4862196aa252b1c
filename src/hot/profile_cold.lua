-- Member profiles (tick): which of the members ARGV are hot in none of the board's live
-- ZSETs KEYS[2..] (KEYS[1], a profile hash of the board, only routes the call to the
-- board's slot). Read only. Returns their 1-based indexes into ARGV.
local out = {}
for i = 1, #ARGV do
  local hot = false
  for k = 2, #KEYS do
    if redis.call('ZSCORE', KEYS[k], ARGV[i]) then
      hot = true
      break
    end
  end
  if not hot then out[#out + 1] = i end
end
return out
