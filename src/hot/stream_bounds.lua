-- Bounds one event stream: reads every consumer group of the stream, works out the first
-- entry each may still need, and (when asked) trims the entries below the first that any
-- group needs. A group needs its oldest pending entry (delivered, not acknowledged) and
-- everything after its last-delivered id; everything below both is acknowledged by it. A
-- stream without groups, or without the caller's group (a first start, or Redis lost the
-- group), is never trimmed: an absent group cannot say what it still needs.
-- One script, so that no group can read or acknowledge between the look and the trim.
--
-- KEYS[1] the stream. ARGV[1] the caller's group; ARGV[2] "1": trim, "0": only look.
-- Returns {acknowledged_below, lag, pending, length, trimmed}:
--   acknowledged_below  the caller's group's bound: every entry of the stream below this id
--                       is acknowledged by the group (or was never for it); nil without
--                       the group (or the stream)
--   lag                 the group's lag as XINFO GROUPS tells it (entries not yet delivered);
--                       nil when Redis cannot tell (entries deleted by XDEL, or no group)
--   pending             entries delivered to the group and not acknowledged
--   length              XLEN after trimming
--   trimmed             entries this call removed
local stream, own, trim = KEYS[1], ARGV[1], ARGV[2] == '1'

if redis.call('EXISTS', stream) == 0 then return {false, false, 0, 0, 0} end

-- Entry ids are "<ms>-<seq>", each a 64-bit unsigned integer: larger than a Lua number holds
-- exactly, so they are compared and incremented as decimal text (Redis writes them without
-- leading zeros).
local function split(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return ms, seq
end
local function compare_decimal(a, b)
  if #a ~= #b then return #a < #b and -1 or 1 end
  if a == b then return 0 end
  return a < b and -1 or 1
end
local function compare(a, b)
  local am, as = split(a)
  local bm, bs = split(b)
  local c = compare_decimal(am, bm)
  if c ~= 0 then return c end
  return compare_decimal(as, bs)
end
local function increment_decimal(s)
  local i = #s
  while i > 0 and string.sub(s, i, i) == '9' do i = i - 1 end
  if i == 0 then return '1' .. string.rep('0', #s) end
  return string.sub(s, 1, i - 1) .. string.char(string.byte(s, i) + 1) .. string.rep('0', #s - i)
end
local MAX = '18446744073709551615'
-- The smallest id after `id` (the last possible id has none: it is its own bound).
local function after(id)
  local ms, seq = split(id)
  if seq ~= MAX then return ms .. '-' .. increment_decimal(seq) end
  if ms ~= MAX then return increment_decimal(ms) .. '-0' end
  return id
end

local floor, bound, lag, pending = nil, false, false, 0
for _, info in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
  local g = {}
  for i = 1, #info, 2 do g[info[i]] = info[i + 1] end
  local needs = after(g['last-delivered-id'])
  if g['pending'] > 0 then
    -- XGROUP SETID may have moved last-delivered-id below entries still pending.
    local oldest = redis.call('XPENDING', stream, g['name'])[2]
    if compare(oldest, needs) < 0 then needs = oldest end
  end
  if floor == nil or compare(needs, floor) < 0 then floor = needs end
  if g['name'] == own then
    bound, lag, pending = needs, g['lag'], g['pending']
  end
end

local trimmed = 0
if trim and bound then trimmed = redis.call('XTRIM', stream, 'MINID', floor) end
return {bound, lag, pending, redis.call('XLEN', stream), trimmed}
