-- Part of update.lua (joined into it by bk_embed when the build embeds it): the call's
-- arguments and keys decoded, the periods' state, the events and the bans; shared helpers.

local policy, order, tie = ARGV[1], ARGV[2], ARGV[3]
local minp, maxp = tonumber(ARGV[4]), tonumber(ARGV[5])
local nslots, nevents = tonumber(ARGV[6]), tonumber(ARGV[7])
local hold = ARGV[8] == '1'
local nbuckets, ids_ttl = tonumber(ARGV[10]), ARGV[11]
local inflight_mode, acked_below = ARGV[12], tonumber(ARGV[13])
local want_points = ARGV[14] == '1'
local marker_ms = ARGV[15]
local has_id = string.find(ARGV[16], 'i', 1, true) ~= nil
local token_field = string.find(ARGV[16], 't', 1, true) ~= nil  -- one token per event
local joined = string.find(ARGV[16], 'j', 1, true) ~= nil and ARGV[17] or nil
local has_token = token_field or joined ~= nil
local has_used = string.find(ARGV[16], 's', 1, true) ~= nil
local packed = string.find(ARGV[16], 'p', 1, true) ~= nil
-- "r": a call of one event that wants its member's standing in every period (see Returns)
local want_standing = string.find(ARGV[16], 'r', 1, true) ~= nil
if want_standing and nevents ~= 1 then error('update: standings need a call of one event') end
local at_base = packed and tonumber(ARGV[18]) or 0
local floor_id = ARGV[19]
local inflight_key = inflight_mode ~= '0' and KEYS[5 + nbuckets] or nil
-- true: entries already marked are duplicates (see inflight), and coalesced events with one
-- of them split
local checking = inflight_mode == '2'
local slot_key0 = 4 + nbuckets + (inflight_key and 1 or 0)  -- KEYS before the slots' keys
local desc, tie_earliest = order == 'd', tie == 'e'

if ARGV[9] == '1' and redis.call('EXISTS', KEYS[2]) == 0 then
  local out = {}
  for e = 1, nevents do out[e] = {'sync'} end
  return want_standing and {out} or out
end

-- Keys this script writes without reading them first (the registry when a key is born, the
-- markers when nothing is pruned or checked): a wrong type there would fail the call after
-- the points were written, and the call sent again once it is repaired would count them
-- twice. Refused before any write instead (every other key is read before it is written).
for _, k in ipairs({KEYS[1], inflight_key}) do
  local t = redis.call('TYPE', k).ok
  if t ~= 'zset' and t ~= 'none' then
    return redis.error_reply('WRONGTYPE key ' .. k .. ' holds a ' .. t .. ', not a zset')
  end
end

local slots = {}
local a = 20
for j = 1, nslots do
  local span = tonumber(ARGV[a + 2])
  slots[j] = {
    reg = ARGV[a], start = tonumber(ARGV[a + 1]), span = span, n = span + 1,
    res = tonumber(ARGV[a + 3]), expire_at = ARGV[a + 4], end_ms = ARGV[a + 5],
    key = KEYS[slot_key0 + 3 * j - 2], meta = KEYS[slot_key0 + 3 * j - 1],
    stale = KEYS[slot_key0 + 3 * j],
    tomb = {},  -- member number -> whether it is a tombstone (in :stale, not hot), once asked
    -- score: member number -> encoded score, false when absent (read, then written);
    -- dirty: member number -> true once written (both made by fill_scores)
  }
  a = a + 6
end

-- Integers below 2^53 as decimal text. '%d' formats a C long: exact here, and much cheaper
-- than '%.0f' (glibc formats doubles with multi-precision arithmetic).
local floor, format, byte = math.floor, string.format, string.byte
local function fmt(x) return format('%d', x) end

-- Per period, once per call: closed (being archived), spilled, spill generation, and whether
-- its expiry (end + retention) is already past on the server's clock.
local any_refused = false  -- a period is closed or expired: events check their periods
do
  local t = redis.call('TIME')
  local server_ms = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
  for j = 1, nslots do
    local s = slots[j]
    local m = redis.call('HMGET', s.meta, 'closed', 'spilled', 'gen')
    s.closed, s.spilled, s.gen = m[1] == '1', m[2] == '1', m[3] or '0'
    s.expired = tonumber(s.expire_at) <= server_ms
    any_refused = any_refused or s.closed or s.expired
  end
end

-- redis.call(cmd, key, list[1..n]...) (n: #list unless given) in chunks that stay within
-- Lua's stack; the replies of a command returning one value per item, concatenated.
local CHUNK = 1000
local function each_chunk(cmd, key, list, per_item, n)
  n = n or #list
  if n == 0 then return {} end
  if n <= CHUNK then
    local r = redis.call(cmd, key, unpack(list, 1, n))
    return per_item and r or {}
  end
  local out = {}
  for i = 1, n, CHUNK do
    local r = redis.call(cmd, key, unpack(list, i, math.min(i + CHUNK - 1, n)))
    if per_item then
      for k = 1, #r do out[#out + 1] = r[k] end
    end
  end
  return out
end

local function expire_with_key(s, key)
  if redis.call('PTTL', key) == -1 then redis.call('PEXPIREAT', key, s.expire_at) end
end

-- Scores are rank_points * n + time_part with n = span + 1 (see update.lua), decoded and
-- encoded inline in plan_event and apply_period_at_once (the hottest code: a function call
-- there costs as much as the arithmetic). Both directions work on exact integers: x % n and
-- (x - x % n) / n are exact below 2^53, and a remainder outside [0, n) (x / n rounded across
-- an integer) is corrected.

-- A key gets its TTL when it is born (or if it ever lost it) and joins the registry, whose
-- own TTL follows its longest-lived period so a registry never outlives its boards.
local function ensure_ttl(s)
  if redis.call('PTTL', s.key) == -1 then
    redis.call('PEXPIREAT', s.key, s.expire_at)
    redis.call('ZADD', KEYS[1], s.end_ms, s.reg)
    if redis.call('PEXPIRETIME', KEYS[1]) < tonumber(s.expire_at) then
      redis.call('PEXPIREAT', KEYS[1], s.expire_at)
    end
  end
end

-- The events, in parallel arrays indexed by event: member number, value, time, and (nil when
-- absent) id, order token, used slots and their cold look-ups (nil: every slot, in order,
-- nothing known: the "*" event). Members are numbered in order of first appearance.
local mem, number_of, nm = {}, {}, 0
local ev_mi, ev_value, ev_at, ev_id, ev_token, ev_used, ev_cold = {}, {}, {}, {}, {}, {}, {}
local argv = ARGV  -- a local: the loop below reads it several times per event
for e = 1, nevents do
  local m = argv[a]
  local mi = number_of[m]
  if not mi then
    nm = nm + 1
    mi = nm
    number_of[m], mem[nm] = nm, m
  end
  -- x + 0 rather than tonumber(x): Lua 5.1's tonumber parses a string twice (strtod in
  -- lua_isnumber, again in lua_tonumber) and is a C call; arithmetic parses it once. The
  -- client sends integers only (a non-number raises a script error, never a wrong number).
  if packed then
    local x = argv[a + 1] + 0
    local v = x % 4294967296  -- exact: the divisor is a power of two
    ev_mi[e], ev_value[e], ev_at[e] = mi, v - 2147483648, at_base + (x - v) / 4294967296
    a = a + 2
  else
    ev_mi[e], ev_value[e], ev_at[e] = mi, argv[a + 1] + 0, argv[a + 2] + 0
    a = a + 3
  end
  if has_id then
    if argv[a] ~= '' then ev_id[e] = argv[a] end
    a = a + 1
  end
  if token_field then
    if argv[a] ~= '' then ev_token[e] = argv[a] end
    a = a + 1
  end
  if has_used then
    if argv[a] == '*' then
      a = a + 1
    else
      local k = tonumber(argv[a])
      a = a + 1
      local used, cold = {}, {}
      for i = 1, k do
        used[i], cold[i] = tonumber(argv[a]), argv[a + 1]
        a = a + 2
      end
      ev_used[e], ev_cold[e] = used, cold
    end
  end
end

-- Banned members (by member number), read only when the board has bans: the hash then holds
-- more than its generation field (one HLEN per call otherwise).
local banned, any_banned = {}, false
if redis.call('HLEN', KEYS[4]) > 1 then
  local flags = each_chunk('HMGET', KEYS[4], mem, true, nm)
  for i = 1, nm do
    if flags[i] then banned[i], any_banned = true, true end
  end
end

-- A joined call's tokens, one per event, where an event's own token is needed (the general
-- path, holds, entries read again); the fast path marks the joined text as it is.
local function split_joined()
  if not joined or ev_token[1] then return end
  local e = 0
  for token in string.gmatch(joined, '[^,]+') do
    e = e + 1
    ev_token[e] = token
  end
  if e ~= nevents then error('update: ' .. e .. ' joined tokens for ' .. nevents .. ' events') end
end
