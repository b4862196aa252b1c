-- Applies a batch of score events to the periods of ONE board atomically (protocol 1).
-- Every key shares the board's hash tag, so this runs on one Redis Cluster slot.
--
-- KEYS[1]            the board's period registry (ZSET member "<period>:<id>", score end ms)
-- KEYS[2]            the board's sync marker: exists once the :meta hashes of the board's
--                    periods are known to say which periods have cold rows (PostgreSQL is
--                    the truth: after Redis lost data, the caller syncs them from there)
-- KEYS[3]            the board's held HASH: member -> order token of an earlier event of the
--                    member that is waiting for the cold tier (later events must wait too)
-- KEYS[4]            the board's bans HASH (see member_remove.lua): field "" the bans
--                    generation, field <member> "1" for each banned member. Read only when it
--                    holds more than the generation (one HLEN per call otherwise)
-- then nbuckets      the board's event id buckets (SETs, see hot/protocol.h): the first is
--                    the current one, which new ids go to
-- then (inflight)    the board's in-flight markers of one stream (ZSET: one member per call,
--                    its applied order tokens joined by commas, scored by the highest entry
--                    id ms among the call's tokens)
-- then 3 per slot j  (1-based): the live ZSET, its :meta HASH, its :stale SET (members that
--                    may be hot and cold at once)
-- ARGV: policy(i|b|r) order(d|a) tie(e|l|n) min_points max_points nslots nevents hold sync
--   nbuckets ids_ttl_ms inflight acknowledged_below_ms points marker_ms fields joined at_base
--   floor_id
--   hold "1": when an event must look up cold rows, also hold spills of that period from
--   removing members for 2 seconds, so the look-up cannot go stale (a writer that kept
--   losing the race to a busy spill asks for this; it guarantees progress)
--   sync "1": the caller has a cold tier; without the board's sync marker nothing is
--   written and every event answers {"sync"} (Redis cannot prove which periods spilled)
--   nbuckets: how many id bucket keys follow KEYS[4]; ids_ttl_ms: the current bucket's TTL
--   when it is created. An event id is applied at most once while it is in any bucket.
--   inflight: "0" no marker key; "1" the applied events with an order token (a stream entry
--   id) are marked, by one marker for the call; "2" marked, and an event whose entry is
--   marked already is a "dup" (it was applied before its entry was read again, or, for a
--   call sent again after look-ups, by another consumer that took the entry over), and a
--   coalesced event with a marked entry answers {"split"}.
--   floor_id: with inflight "1", the lowest entry id ("<ms>-<seq>") of the call's tokens, or "".
--     Entries read as new are checked too when a marker holds an id at or above it: after
--     the stream's node rolled back (a failover to a replica that lacked their delivery, a
--     restart from an older file) applied entries are delivered again as new. Markers of a
--     single consumer's earlier calls hold lower ids: the common call looks at the markers
--     scored floor_id ms or more (the previous call's at most) and goes on unchecked.
--   acknowledged_below_ms: markers scored below it are dropped first (every entry in them
--   is acknowledged: never read again). marker_ms: the score of this call's marker, at
--   least the ms of every order token of the call.
--   points: "1" an applied event answers {mask, points...}; "0" only its mask (an integer)
--     (see Returns for the short forms of a call whose events all applied)
--   fields: which optional fields each event carries, a letter each: "i" event_id, "t"
--     order_token, "s" used. An absent field is "" (event_id, order_token) or "*" (used) for
--     every event. Two more letters say how the rest travels: "j", every event has an order
--     token, none coalesced, and they come joined by commas in `joined` instead of one per
--     event (a stream consumer's common call: the joined text is the call's in-flight marker
--     as it is, and the events are split out of it only on the general path); "p", each
--     event's value and time come as one integer, packed = (at_ms - at_base) * 2^32 + (value
--     + 2^31), below 2^52 so exact in a double (the caller packs a call whose values fit 32
--     bits and whose times lie within 2^20 ms of its earliest, at_base). The common call
--     sends two arguments per event.
--   joined: the events' order tokens joined by commas with "j" in fields, else "".
--   at_base: with "p" in fields, the ms the packed times count from, else "".
--   per slot (6): registry_member start_ms span_units resolution_ms expire_at_ms end_ms
--   per event: member, value at_ms (or packed), [event_id] [order_token] [used], where used is
--     "*" (every slot, in order, nothing known of the cold tier: the common event) or nslots_used
--     followed, per used slot, by: slot cold
--     cold: "?" not looked up; "a<gen>" absent from the cold tier; "p<gen>:<encoded>" its
--     cold score. <gen> is the period's spill generation when the caller was told to look:
--     a spill that removed members since then may have moved this member to the cold tier
--     after the look-up, so a stale generation means "look again".
--     order_token: "" or the event's place in its stream; an event whose member is held by
--     another token waits, the held event itself clears the hold once it is resolved.
--     ",tok1,tok2,..." (just "," without tokens): the event stands for several events of one
--     member, coalesced by the caller where applying it is exactly what one by one would
--     give (each token is marked in flight). Where it might not be (the member is held, the
--     sum leaves the range, which one by one would refuse only in part, or, with inflight
--     "2", one of its entries is marked), it answers {"split"}: nothing
--     was written for it, the caller sends the events one by one. ",!,tok1,...": a coalesced
--     replace whose value changed within it: it changes the time even if the value is the
--     member's current one.
--
-- Reads and writes are batched: one ZMSCORE per period (and SMISMEMBER per id bucket) before
-- the events, one ZADD per period (and one SADD) after. In between, the events see each
-- other's writes through a table, so the outcome is exactly that of applying them one by
-- one, in order; the script is atomic, so no client can see the difference.
-- The Lua side is most of the script's cost, so it allocates little per event: events are
-- kept in parallel arrays, members are numbered once (1..nm) and every per-member table is
-- an array indexed by that number.
--
-- Scores: encoded = rank_points * (span + 1) + time_part; smaller ranks higher. Every number
-- handled is an integer below 2^53, so Lua's doubles hold it exactly.
-- Returns the number of events when every one applied without points and none rehydrated
-- (the common call of a stream consumer); {"points", then each event's points per slot, event
-- by event} when every one applied with points on the fast path (none rehydrated); else one
-- array per event:
--   {mask, points...}  applied: integers; bit i-1 of mask is set when used slot i was written
--     from its cold value (rehydrated), then the new points per used slot (with points "0":
--     the mask alone, an integer instead of an array)
--   {"dup"}  {"closed", period}  {"range", period, points}
--   {"cold", slot, gen, ...}  the member is absent from spilled periods: look up its cold
--     rows and call again with them
--   {"blocked"}  an earlier event of this call for the same member returned "cold": call
--     again after it, so one member's events are never reordered
--   {"waiting"}  an earlier event of the member (another order token) is held: not applied
--   {"sync"}  the board's sync marker is missing (see KEYS[2]): nothing was written
--   {"banned"}  the member is banned from the board (KEYS[4]): nothing written for it, its
--     event id is not recorded
--   {"split"}  a coalesced event (see order_token) must be sent as its events; the member's
--     later events of the call answer the same, so that they follow it
--   {"span", period}  the event time lies outside the period (a caller bug)
--   {"expired", period}  the key's expiry (period end + retention) is already past on the
--     Redis server's clock (a replay or backfill far behind real time): Redis would delete
--     the write at once, so it is refused instead of silently lost
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
  return out
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

-- Scores are rank_points * n + time_part with n = span + 1 (see above), decoded and encoded
-- inline in apply_event (the hottest code: a function call there costs as much as the
-- arithmetic). Both directions work on exact integers: x % n and (x - x % n) / n are exact
-- below 2^53, and a remainder outside [0, n) (x / n rounded across an integer) is corrected.

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

-- Scratch space of apply_event, reused by every event: the plan for used slot i.
local p_score, p_points, p_write, p_cold = {}, {}, {}, {}

-- Event ids applied (known before this call, or by an earlier event of it), and the new ones.
local seen_ids, new_ids = {}, {}

-- Event e (of member number mi), unless a refusal comes first. forced: a coalesced replace
-- whose value changed within it (see order_token).
local function apply_event(e, mi, forced)
  local used, cold = ev_used[e], ev_cold[e]
  local nused = used and #used or nslots
  if any_refused then
    for i = 1, nused do
      local s = slots[used and used[i] or i]
      if s.closed then return {'closed', s.reg} end
      if s.expired then return {'expired', s.reg} end
    end
  end
  local event_id = ev_id[e]
  if event_id and seen_ids[event_id] then return {'dup'} end
  local value, at = ev_value[e], ev_at[e]
  -- First pass: compute every period's new score; write nothing unless all are valid.
  local missing
  for i = 1, nused do
    local j = used and used[i] or i
    local s = slots[j]
    local current = s.score[mi]
    local from_cold = false
    -- A spilled period's member that is not hot may have a cold row, unless it was removed:
    -- then it is a tombstone (in :stale, not hot), its row is void and it starts from zero
    -- (a cold value the caller looked up before the removal is ignored). Asked only here,
    -- never on the common path.
    local tomb = false
    if not current and s.spilled then
      tomb = s.tomb[mi]
      if tomb == nil then
        tomb = redis.call('SISMEMBER', s.stale, mem[mi]) == 1
        s.tomb[mi] = tomb
      end
    end
    if not current and s.spilled and not tomb then
      local c = cold and cold[i] or '?'
      local g = s.gen
      if c == '?' then
        missing = missing or {}
        missing[#missing + 1] = {j, g}
      else
        local colon = string.find(c, ':', 2, true)
        local seen = string.sub(c, 2, (colon or 0) - 1)
        if seen ~= g then
          missing = missing or {}
          missing[#missing + 1] = {j, g}
        elseif byte(c, 1) == 112 then  -- "p<gen>:<encoded>"
          current, from_cold = tonumber(string.sub(c, colon + 1)), true
        end
      end
    end
    if not missing then
      local points, changed
      local score = current
      if current then
        local n = s.n
        local t = current % n
        local q = (current - t) / n
        if t < 0 then q = q - 1 elseif t >= n then q = q + 1 end
        local old = desc and (maxp - q) or (minp + q)
        if policy == 'i' then
          points, changed = old + value, value ~= 0
        elseif policy == 'b' then
          local better = (desc and value > old) or (not desc and value < old)
          if better then points, changed = value, true else points, changed = old, false end
        else
          points, changed = value, value ~= old or forced
        end
      else
        points, changed = value, true
      end
      if points < minp or points > maxp then return {'range', s.reg, fmt(points)} end
      if changed then
        local time_part = 0
        if tie ~= 'n' then
          local d, res = at - s.start, s.res
          local units = (d - d % res) / res
          if units < 0 or units > s.span then return {'span', s.reg} end
          time_part = tie_earliest and units or (s.span - units)
        end
        score = (desc and (maxp - points) or (points - minp)) * s.n + time_part
      end
      p_score[i], p_points[i], p_write[i], p_cold[i] = score, points, changed or from_cold, from_cold
    end
  end
  if missing then
    local out = {'cold'}
    if hold then
      local t = redis.call('TIME')
      local until_ms = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000) + 2000
      for _, m in ipairs(missing) do
        redis.call('HSET', slots[m[1]].meta, 'hold_until', fmt(until_ms))
      end
    end
    for _, m in ipairs(missing) do
      out[#out + 1] = tostring(m[1])
      out[#out + 1] = m[2]
    end
    return out
  end
  if hold and cold then
    -- This writer is done with its look-ups: let spills remove members again.
    for i = 1, nused do
      if cold[i] ~= '?' then redis.call('HDEL', slots[used[i]].meta, 'hold_until') end
    end
  end
  local out, mask, bit = want_points and {0} or nil, 0, 1
  for i = 1, nused do
    local s = slots[used and used[i] or i]
    if p_write[i] then
      s.dirty[mi] = true
      s.score[mi] = p_score[i]
    end
    if p_cold[i] then
      -- Hot and cold at once until the caller deletes the cold row: reads skip that row.
      -- rgen tells a merged read running meanwhile to read again.
      redis.call('SADD', s.stale, mem[mi])
      expire_with_key(s, s.stale)
      redis.call('HINCRBY', s.meta, 'rgen', 1)
      mask = mask + bit
    end
    if out then out[i + 1] = p_points[i] end
    bit = bit * 2
  end
  if event_id then
    seen_ids[event_id] = true
    new_ids[#new_ids + 1] = event_id
  end
  if not out then return mask, true end
  out[1] = mask
  return out, true
end

-- Read: the current score of every member, per period (of the members whose events use it).
for j = 1, nslots do
  local s = slots[j]
  local members, numbers = mem, nil  -- numbers[i]: the number of members[i] (nil: i)
  if has_used then
    members, numbers = {}, {}
    local listed = {}
    for e = 1, nevents do
      local mi, used = ev_mi[e], ev_used[e]
      local uses = not used
      if used then
        for _, u in ipairs(used) do
          if u == j then uses = true end
        end
      end
      if uses and not listed[mi] then
        listed[mi] = true
        members[#members + 1], numbers[#numbers + 1] = mem[mi], mi
      end
    end
  end
  s.read_members, s.read_numbers = members, numbers
end
local function read_scores()
  for j = 1, nslots do
    local s = slots[j]
    s.found = each_chunk('ZMSCORE', s.key, s.read_members, true)
  end
end
read_scores()

-- Each period's scores as read, for the general path.
local function fill_scores()
  for j = 1, nslots do
    local s = slots[j]
    local score, found, numbers = {}, s.found, s.read_numbers
    -- f + 0: see the events' values above (ZMSCORE answers integers as decimal text).
    for i = 1, #s.read_members do
      local f = found[i]
      score[numbers and numbers[i] or i] = f and f + 0 or false
    end
    s.score, s.dirty = score, {}
  end
end

-- Which event ids were applied: in any live bucket of the board.
if nbuckets > 0 then
  local ids = {}
  for e = 1, nevents do
    if ev_id[e] then ids[#ids + 1] = ev_id[e] end
  end
  for b = 1, nbuckets do
    local key = KEYS[4 + b]
    if #ids > 0 and redis.call('EXISTS', key) == 1 then
      local known = each_chunk('SMISMEMBER', key, ids, true)
      local rest = {}
      for i = 1, #ids do
        if known[i] == 1 then seen_ids[ids[i]] = true else rest[#rest + 1] = ids[i] end
      end
      ids = rest
    end
  end
end

-- Stream entries applied before they were read again count as duplicates; markers of
-- acknowledged entries go first.
local marked = {}
if inflight_key then
  if acked_below > 0 then
    redis.call('ZREMRANGEBYSCORE', inflight_key, '-inf', '(' .. fmt(acked_below))
  end
  local min_ms
  if checking then
    -- Entries read again (rare): every marker that may hold one of this call's tokens.
    split_joined()
    for e = 1, nevents do
      for ms in string.gmatch(ev_token[e] or '', '(%d+)%-%d+') do
        ms = tonumber(ms)
        if not min_ms or ms < min_ms then min_ms = ms end
      end
    end
    min_ms = min_ms and fmt(min_ms)
  elseif floor_id ~= '' then
    min_ms = string.match(floor_id, '^(%d+)%-')
  end
  if min_ms then
    local found = redis.call('ZRANGE', inflight_key, min_ms, '+inf', 'BYSCORE', 'WITHSCORES')
    local reached = checking
    if not checking and #found > 0 then
      -- Does a marker hold an entry id at or above the floor? One scored above its ms does;
      -- one scored at it does if it holds "<that ms>-<seq>" with seq at least the floor's
      -- (a plain search: each id follows a comma, a qualifier's colon or the start).
      local fseq, needle = tonumber(string.match(floor_id, '%-(%d+)$')), min_ms .. '-'
      for i = 1, #found, 2 do
        if reached then break end
        if tonumber(found[i + 1]) > tonumber(min_ms) then
          reached = true
        else
          local m, from = found[i], 1
          while not reached do
            local s0, e0 = string.find(m, needle, from, true)
            if not s0 then break end
            local before = s0 > 1 and byte(m, s0 - 1) or 44
            local seq = (before == 44 or before == 58) and string.match(m, '^%d+', e0 + 1)
            reached = seq and tonumber(seq) >= fseq or false
            from = e0 + 1
          end
        end
      end
    end
    if reached then
      for i = 1, #found, 2 do
        for token in string.gmatch(found[i], '[^,]+') do marked[token] = true end
      end
    end
    if reached and not checking then
      -- Only an entry of this call found there makes it a checked call: markers of another
      -- consumer's later entries (one stream, several consumers) leave it unchecked.
      split_joined()
      for e = 1, nevents do
        for t in string.gmatch(ev_token[e] or '', '[^,]+') do
          if marked[t] then checking = true end
        end
      end
    end
  end
end

-- Holds: which members (by number) wait behind an earlier event (only read when the board
-- has any).
local held, released = {}, {}
if has_token and redis.call('EXISTS', KEYS[3]) == 1 then
  split_joined()
  local numbers, members = {}, {}
  for e = 1, nevents do
    if ev_token[e] then
      numbers[#numbers + 1], members[#members + 1] = ev_mi[e], mem[ev_mi[e]]
    end
  end
  local tokens = each_chunk('HMGET', KEYS[3], members, true)
  for i = 1, #members do
    if tokens[i] then held[numbers[i]] = tokens[i] end
  end
end

-- A coalesced event's order token (see above) starts with a comma.
local function merged(token) return token ~= nil and byte(token, 1) == 44 end

-- A coalesced event one of whose entries is marked already (a checked call: the caller
-- sends it again after its cold look-ups, and another consumer may have applied some of
-- its entries meanwhile): its entries must be looked up one by one.
local function part_marked(token)
  for t in string.gmatch(token, '[^,]+') do
    if t ~= '!' and marked[t] then return true end
  end
  return false
end

local results, new_marks = {}, {}
local flat_points  -- the fast path's reply with points (see Returns)

-- The common call, applied period by period: every event uses every period, none of them
-- spilled, closed or expired, no event ids, no holds, no entry read again, and no coalesced
-- replace. Then every event applies unless one would be refused (range, span): true when it
-- applied them all, with exactly the writes and replies apply_event would give one by one;
-- false, having written nothing, when the general path must run instead. The score
-- arithmetic is apply_event's, written again on purpose in fewer steps (a function call per
-- event and period costs as much as the arithmetic); the coalescing property test holds the
-- two paths to the same boards.
-- The second result is true when it gave up after it began: the scores as read are gone.
local function apply_all_at_once()
  if has_used or nbuckets > 0 or any_refused or checking or any_banned or next(held) then
    return false, false
  end
  for j = 1, nslots do
    if slots[j].spilled then return false, false end
  end
  if policy == 'r' and has_token then
    for e = 1, nevents do
      if merged(ev_token[e]) then return false, false end
    end
  end
  -- The arithmetic works on q, the score without its time part (see "Scores"): q = q0 +
  -- sgn * points, so the range check is 0 <= q <= width, a better value has the smaller q,
  -- and an increment adds sgn * value to it. Everything the loop reads is a local.
  local inc, best, tied = policy == 'i', policy == 'b', tie ~= 'n'
  local q0, sgn, width = desc and maxp or -minp, desc and -1 or 1, maxp - minp
  local ev_mi, ev_value, ev_at = ev_mi, ev_value, ev_at
  local points_of = {}  -- per period, per event: its points (when the caller wants them)
  for j = 1, nslots do
    local s = slots[j]
    -- ZMSCORE's reply is the score table (members are numbered in order: nothing is left
    -- out without used slots): decimal text as read, a number once written, false if absent.
    s.score, s.dirty = s.found, {}
    local score, dirty, n, start, res, span = s.score, s.dirty, s.n, s.start, s.res, s.span
    local tbase, tsgn = tie_earliest and 0 or span, tie_earliest and 1 or -1  -- time part
    local points_j = want_points and {} or nil
    for e = 1, nevents do
      local mi, value = ev_mi[e], ev_value[e]
      local current = score[mi]
      local q, changed
      if current then
        current = current + 0
        local t = current % n
        q = (current - t) / n
        if t < 0 then q = q - 1 elseif t >= n then q = q + 1 end
        if inc then
          changed = value ~= 0
          q = q + sgn * value
        elseif best then
          local qv = q0 + sgn * value
          changed = qv < q
          if changed then q = qv end
        else
          local qv = q0 + sgn * value
          changed = qv ~= q
          q = qv
        end
      else
        q, changed = q0 + sgn * value, true
      end
      if q < 0 or q > width then return false, true end
      if changed then
        local time_part = 0
        if tied then
          local d = ev_at[e] - start
          local units = (d - d % res) / res
          if units < 0 or units > span then return false, true end
          time_part = tbase + tsgn * units
        end
        score[mi] = q * n + time_part
        dirty[mi] = true
      end
      if points_j then points_j[e] = (q - q0) * sgn end
    end
    points_of[j] = points_j
  end
  if want_points then
    -- One flat array: a table per event would cost more than the arithmetic above (built
    -- here and again by Redis when it converts the reply).
    local flat, k = {'points'}, 1
    for e = 1, nevents do
      for j = 1, nslots do
        k = k + 1
        flat[k] = points_of[j][e]
      end
    end
    flat_points = flat
  end
  if inflight_key then
    if joined then
      new_marks[1] = joined
    else
      for e = 1, nevents do
        if ev_token[e] then new_marks[#new_marks + 1] = ev_token[e] end
      end
    end
  end
  return true
end

-- blocked / split: members whose later events of this call must not be applied before an
-- earlier one that answered "cold" / "split" (they answer the same; the caller resends them).
local blocked, split, split_any = {}, {}, false
local all_at_once, began = apply_all_at_once()
if not all_at_once then
  if began then read_scores() end  -- nothing was written: read them again
  fill_scores()
  split_joined()
end
for e = 1, all_at_once and 0 or nevents do
  local mi, token = ev_mi[e], ev_token[e]
  local holder = token and held[mi]
  if token and marked[token] then
    results[e] = {'dup'}
  elseif banned[mi] then
    -- Refused for good (an entry applied before the ban answers dup above: it was removed
    -- with the member).
    results[e] = {'banned'}
    if holder and holder == token then
      held[mi] = nil
      released[#released + 1] = mem[mi]
    end
  elseif split[mi] or (ev_id[e] and split_any) then
    -- After a split, events with ids go after it too: two members' events may share an id.
    results[e] = {'split'}
    split[mi] = true
  elseif blocked[mi] then
    results[e] = {'blocked'}
  elseif merged(token) and (holder or (checking and part_marked(token))) then
    results[e] = {'split'}
    split[mi], split_any = true, true
  elseif holder and holder ~= token then
    results[e] = {'waiting'}
  else
    -- forced: a coalesced replace whose value changed within it (only replace looks at it)
    local r, applied = apply_event(e, mi, policy == 'r' and merged(token) and byte(token, 2) == 33)
    results[e] = r
    local status = not applied and r[1]
    if applied then
      if inflight_key and token then
        new_marks[#new_marks + 1] = token
        -- An entry read twice within one call applies once (a coalesced event's entries
        -- each count).
        if checking then
          for t in string.gmatch(token, '[^,]+') do marked[t] = true end
        end
      end
    elseif status == 'range' and merged(token) then
      results[e] = {'split'}
      split[mi], split_any = true, true
    end
    if status == 'cold' then
      blocked[mi] = true
    elseif holder then
      -- The held event is resolved (applied or refused): the member's later events may go.
      held[mi] = nil
      released[#released + 1] = mem[mi]
    end
  end
end
if #released > 0 then each_chunk('HDEL', KEYS[3], released, false) end

-- Write: every changed member once, with its last score; then TTLs, event ids and markers.
local args = {}  -- of every period's ZADD in turn, its first k entries
for j = 1, nslots do
  local s = slots[j]
  local dirty, score, k = s.dirty, s.score, 0
  for mi = 1, nm do
    if dirty[mi] then
      args[k + 1], args[k + 2] = format('%d', score[mi]), mem[mi]
      k = k + 2
    end
  end
  if k > 0 then
    each_chunk('ZADD', s.key, args, false, k)
    ensure_ttl(s)
  end
end
if #new_ids > 0 then
  each_chunk('SADD', KEYS[5], new_ids, false)
  if redis.call('PTTL', KEYS[5]) == -1 then redis.call('PEXPIRE', KEYS[5], ids_ttl) end
end
if #new_marks > 0 then
  -- Coalesced tokens (",!,t1,t2") join as they are: readers split at commas and skip "!".
  redis.call('ZADD', inflight_key, marker_ms, table.concat(new_marks, ','))
end
if all_at_once then return flat_points or nevents end
return results
