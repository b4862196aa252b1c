-- Applies a batch of score events to the periods of ONE board atomically (protocol 1).
-- Every key shares the board's hash tag, so this runs on one Redis Cluster slot.
--
-- KEYS[1]            the board's period registry (ZSET member "<period>:<id>", score end ms)
-- KEYS[4j-2..4j+1]   for period slot j (1-based): the live ZSET, its :meta HASH, its :ids
--                    SET, its :stale SET (members that may be hot and cold at once)
-- ARGV: policy(i|b|r) order(d|a) tie(e|l|n) min_points max_points nslots nevents hold
--   hold "1": when an event must look up cold rows, also hold spills of that period from
--   removing members for 2 seconds, so the look-up cannot go stale (a writer that kept
--   losing the race to a busy spill asks for this; it guarantees progress)
--   per slot (6): registry_member start_ms span_units resolution_ms expire_at_ms end_ms
--   per event: member value at_ms event_id nslots_used, then per used slot: slot cold
--     cold: "?" not looked up; "a<gen>" absent from the cold tier; "p<gen>:<encoded>" its
--     cold score. <gen> is the period's spill generation when the caller was told to look:
--     a spill that removed members since then may have moved this member to the cold tier
--     after the look-up, so a stale generation means "look again".
--
-- Scores: encoded = rank_points * (span + 1) + time_part; smaller ranks higher. Every number
-- handled is an integer below 2^53, so Lua's doubles hold it exactly.
-- Returns one array per event:
--   {"ok", {points...}, {rehydrated...}}  points and "1"/"0" (written from the cold value)
--     per used slot
--   {"dup"}  {"closed", period}  {"range", period, points}
--   {"cold", slot, gen, ...}  the member is absent from spilled periods: look up its cold
--     rows and call again with them
--   {"blocked"}  an earlier event of this call for the same member returned "cold": call
--     again after it, so one member's events are never reordered
--   {"span", period}  the event time lies outside the period (a caller bug)
--   {"expired", period}  the key's expiry (period end + retention) is already past on the
--     Redis server's clock (a replay or backfill far behind real time): Redis would delete
--     the write at once, so it is refused instead of silently lost
local policy, order, tie = ARGV[1], ARGV[2], ARGV[3]
local minp, maxp = tonumber(ARGV[4]), tonumber(ARGV[5])
local nslots, nevents = tonumber(ARGV[6]), tonumber(ARGV[7])
local hold = ARGV[8] == '1'

local slots = {}
local a = 9
for j = 1, nslots do
  slots[j] = {
    reg = ARGV[a], start = tonumber(ARGV[a + 1]), span = tonumber(ARGV[a + 2]),
    res = tonumber(ARGV[a + 3]), expire_at = ARGV[a + 4], end_ms = ARGV[a + 5],
    key = KEYS[4 * j - 2], meta = KEYS[4 * j - 1], ids = KEYS[4 * j], stale = KEYS[4 * j + 1],
  }
  a = a + 6
end

local function fmt(x) return string.format('%.0f', x) end

local server_ms
local function past(expire_at)
  if not server_ms then
    local t = redis.call('TIME')
    server_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return tonumber(expire_at) <= server_ms
end

local function flag(s, name)
  if s[name] == nil then s[name] = redis.call('HGET', s.meta, name) == '1' end
  return s[name]
end

local function gen(s)
  if s.gen == nil then s.gen = redis.call('HGET', s.meta, 'gen') or '0' end
  return s.gen
end

local function expire_with_key(s, key)
  if redis.call('PTTL', key) == -1 then redis.call('PEXPIREAT', key, s.expire_at) end
end

local function decode(s, score)
  local n = s.span + 1
  local q = math.floor(score / n)
  local t = score - q * n
  if t < 0 then q, t = q - 1, t + n elseif t >= n then q, t = q + 1, t - n end
  if order == 'd' then return maxp - q end
  return minp + q
end

local function encode(s, points, at)
  local rank_points = (order == 'd') and (maxp - points) or (points - minp)
  local time_part = 0
  if tie ~= 'n' then
    local units = math.floor((at - s.start) / s.res)
    if units < 0 or units > s.span then return nil end
    time_part = (tie == 'e') and units or (s.span - units)
  end
  return rank_points * (s.span + 1) + time_part
end

-- A key gets its TTL when it is born (or if it ever lost it) and joins the registry, whose
-- own TTL follows its longest-lived period so a registry never outlives its boards.
local function ensure_ttl(s)
  if s.ttl_ok then return end
  if redis.call('PTTL', s.key) == -1 then
    redis.call('PEXPIREAT', s.key, s.expire_at)
    redis.call('ZADD', KEYS[1], s.end_ms, s.reg)
    if redis.call('PEXPIRETIME', KEYS[1]) < tonumber(s.expire_at) then
      redis.call('PEXPIREAT', KEYS[1], s.expire_at)
    end
  end
  s.ttl_ok = true
end

local function apply_event(member, value, at, event_id, used, cold)
  for _, j in ipairs(used) do
    if flag(slots[j], 'closed') then return {'closed', slots[j].reg} end
    if past(slots[j].expire_at) then return {'expired', slots[j].reg} end
  end
  if event_id ~= '' then
    for _, j in ipairs(used) do
      if redis.call('SISMEMBER', slots[j].ids, event_id) == 1 then return {'dup'} end
    end
  end
  -- First pass: compute every period's new score; write nothing unless all are valid.
  local plans, missing = {}, {}
  for i, j in ipairs(used) do
    local s = slots[j]
    local current = redis.call('ZSCORE', s.key, member)
    local from_cold = false
    if not current and flag(s, 'spilled') then
      local c = cold[i]
      local g = gen(s)
      if c == '?' then
        missing[#missing + 1] = {j, g}
      else
        local colon = string.find(c, ':', 2, true)
        local seen = string.sub(c, 2, (colon or 0) - 1)
        if seen ~= g then
          missing[#missing + 1] = {j, g}
        elseif string.sub(c, 1, 1) == 'p' then
          current, from_cold = string.sub(c, colon + 1), true
        end
      end
    end
    if #missing == 0 then
      local points, changed, score
      if current then
        score = tonumber(current)
        local old = decode(s, score)
        if policy == 'i' then
          points, changed = old + value, value ~= 0
        elseif policy == 'b' then
          local better = (order == 'd' and value > old) or (order == 'a' and value < old)
          if better then points, changed = value, true else points, changed = old, false end
        else
          points, changed = value, value ~= old
        end
      else
        points, changed = value, true
      end
      if points < minp or points > maxp then return {'range', s.reg, fmt(points)} end
      if changed then
        score = encode(s, points, at)
        if not score then return {'span', s.reg} end
      end
      plans[i] = {s = s, score = score, points = points, write = changed or from_cold,
                  from_cold = from_cold}
    end
  end
  if #missing > 0 then
    local out = {'cold'}
    if hold then
      local t = redis.call('TIME')
      local until_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + 2000
      for _, m in ipairs(missing) do
        redis.call('HSET', slots[m[1]].meta, 'hold_until', string.format('%.0f', until_ms))
      end
    end
    for _, m in ipairs(missing) do
      out[#out + 1] = tostring(m[1])
      out[#out + 1] = m[2]
    end
    return out
  end
  if hold then
    -- This writer is done with its look-ups: let spills remove members again.
    for i = 1, #used do
      if cold[i] ~= '?' then redis.call('HDEL', plans[i].s.meta, 'hold_until') end
    end
  end
  local points, rehydrated = {}, {}
  for i = 1, #used do
    local p = plans[i]
    if p.write then
      redis.call('ZADD', p.s.key, fmt(p.score), member)
      ensure_ttl(p.s)
    end
    if p.from_cold then
      -- Hot and cold at once until the caller deletes the cold row: reads skip that row.
      -- rgen tells a merged read running meanwhile to read again.
      redis.call('SADD', p.s.stale, member)
      expire_with_key(p.s, p.s.stale)
      redis.call('HINCRBY', p.s.meta, 'rgen', 1)
    end
    if event_id ~= '' then
      if redis.call('SADD', p.s.ids, event_id) == 1 then expire_with_key(p.s, p.s.ids) end
    end
    points[i] = fmt(p.points)
    rehydrated[i] = p.from_cold and '1' or '0'
  end
  return {'ok', points, rehydrated}
end

local results, blocked = {}, {}
for e = 1, nevents do
  local member, value, at, event_id = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), ARGV[a + 3]
  local k = tonumber(ARGV[a + 4])
  a = a + 5
  local used, cold = {}, {}
  for i = 1, k do
    used[i] = tonumber(ARGV[a])
    cold[i] = ARGV[a + 1]
    a = a + 2
  end
  if blocked[member] then
    results[e] = {'blocked'}
  else
    results[e] = apply_event(member, value, at, event_id, used, cold)
    if results[e][1] == 'cold' then blocked[member] = true end
  end
end
return results
