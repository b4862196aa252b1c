-- The hot members nearest to a position (encoded e, member m) in listing order, for merged
-- hot + cold reads: up to K listed strictly before it (nearest first) and up to K listed
-- strictly after it, how many hot members are listed before it, and the spill generation.
-- KEYS[1] live ZSET, KEYS[2] meta HASH. ARGV: e m K.
-- Returns {gen, count_before, nbefore, member, score, ... (before, nearest first),
--          member, score, ... (after)}.
local e, m, k = ARGV[1], ARGV[2], tonumber(ARGV[3])
-- Bytewise comparison: Lua's "<" on strings follows the server's locale (strcoll).
local function bytes_less(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local before_same, after_same = {}, {}
-- Members with exactly this score are ordered by member bytes.
local same = redis.call('ZRANGEBYSCORE', KEYS[1], e, e, 'WITHSCORES')
for i = 1, #same, 2 do
  if bytes_less(same[i], m) then
    before_same[#before_same + 1] = {same[i], same[i + 1]}
  elseif bytes_less(m, same[i]) then
    after_same[#after_same + 1] = {same[i], same[i + 1]}
  end
end
local count_before = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. e) + #before_same
local before = {}
for i = #before_same, 1, -1 do
  if #before >= k then break end
  before[#before + 1] = before_same[i]
end
if #before < k then
  local more = redis.call('ZREVRANGEBYSCORE', KEYS[1], '(' .. e, '-inf', 'WITHSCORES', 'LIMIT', 0, k - #before)
  for i = 1, #more, 2 do before[#before + 1] = {more[i], more[i + 1]} end
end
local after = {}
for i = 1, #after_same do
  if #after >= k then break end
  after[#after + 1] = after_same[i]
end
if #after < k then
  local more = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. e, '+inf', 'WITHSCORES', 'LIMIT', 0, k - #after)
  for i = 1, #more, 2 do after[#after + 1] = {more[i], more[i + 1]} end
end
local g = redis.call('HMGET', KEYS[2], 'gen', 'rgen')
local out = {(g[1] or '0') .. ':' .. (g[2] or '0'), count_before, #before}
for _, p in ipairs(before) do out[#out + 1] = p[1]; out[#out + 1] = p[2] end
for _, p in ipairs(after) do out[#out + 1] = p[1]; out[#out + 1] = p[2] end
return out
