-- Applies a batch of score events to the periods of ONE board atomically (protocol 1).
-- Every key shares the board's hash tag, so this runs on one Redis Cluster slot.
--
-- KEYS[1]            the board's period registry (ZSET member "<period>:<id>", score end ms)
-- KEYS[3j-1..3j+1]   for period slot j (1-based): the live ZSET, its :meta HASH, its :ids SET
-- ARGV: policy(i|b|r) order(d|a) tie(e|l|n) min_points max_points nslots nevents
--   per slot (6): registry_member start_ms span_units resolution_ms expire_at_ms end_ms
--   per event: member value at_ms event_id nslots_used, then per used slot: slot cold
--     cold: "?" unknown, "-" known absent from the cold tier, or the cold encoded score
--
-- Scores: encoded = rank_points * (span + 1) + time_part; smaller ranks higher. Every number
-- handled is an integer below 2^53, so Lua's doubles hold it exactly.
-- Returns one array per event:
--   {"ok", points...}  {"dup"}  {"closed", period}  {"range", period, points}
--   {"cold", slot...}  (the member is absent from spilled periods: fetch its cold rows)
--   {"span", period}   (the event time lies outside the period; a caller bug)
local policy, order, tie = ARGV[1], ARGV[2], ARGV[3]
local minp, maxp = tonumber(ARGV[4]), tonumber(ARGV[5])
local nslots, nevents = tonumber(ARGV[6]), tonumber(ARGV[7])

local slots = {}
local a = 8
for j = 1, nslots do
  slots[j] = {
    reg = ARGV[a], start = tonumber(ARGV[a + 1]), span = tonumber(ARGV[a + 2]),
    res = tonumber(ARGV[a + 3]), expire_at = ARGV[a + 4], end_ms = ARGV[a + 5],
    key = KEYS[3 * j - 1], meta = KEYS[3 * j], ids = KEYS[3 * j + 1],
  }
  a = a + 6
end

local function fmt(x) return string.format('%.0f', x) end

local function flag(s, name)
  if s[name] == nil then s[name] = redis.call('HGET', s.meta, name) == '1' end
  return s[name]
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
      if cold[i] == '?' then
        missing[#missing + 1] = tostring(j)
      elseif cold[i] ~= '-' then
        current, from_cold = cold[i], true
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
      plans[i] = {s = s, score = score, points = points, write = changed or from_cold}
    end
  end
  if #missing > 0 then
    local out = {'cold'}
    for _, j in ipairs(missing) do out[#out + 1] = j end
    return out
  end
  local out = {'ok'}
  for i = 1, #used do
    local p = plans[i]
    if p.write then
      redis.call('ZADD', p.s.key, fmt(p.score), member)
      ensure_ttl(p.s)
    end
    if event_id ~= '' then
      if redis.call('SADD', p.s.ids, event_id) == 1 and redis.call('PTTL', p.s.ids) == -1 then
        redis.call('PEXPIREAT', p.s.ids, p.s.expire_at)
      end
    end
    out[#out + 1] = fmt(p.points)
  end
  return out
end

local results = {}
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
  results[e] = apply_event(member, value, at, event_id, used, cold)
end
return results
