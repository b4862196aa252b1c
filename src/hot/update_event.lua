-- Part of update.lua (joined into it by bk_embed when the build embeds it): apply_event, one
-- event of the general path, as named steps. A step is a call per event, never per event and
-- period: the score arithmetic stays inline in plan_event (see "Scores" in update_args.lua).

-- Scratch space of apply_event, reused by every event: the plan for used slot i.
local p_score, p_points, p_write, p_cold = {}, {}, {}, {}

-- Event ids applied (known before this call, or by an earlier event of it), and the new ones.
local seen_ids, new_ids = {}, {}

-- The first of the event's periods that is closed or expired, as its refusal (nil: none).
local function refused_period(used, nused)
  for i = 1, nused do
    local s = slots[used and used[i] or i]
    if s.closed then return {'closed', s.reg} end
    if s.expired then return {'expired', s.reg} end
  end
end

-- A spilled period's member that is not hot may have a cold row, unless it was removed:
-- then it is a tombstone (in :stale, not hot), its row is void and it starts from zero
-- (a cold value the caller looked up before the removal is ignored). Asked only here,
-- never on the common path, and once per period and member.
local function tombstone(s, mi)
  local tomb = s.tomb[mi]
  if tomb == nil then
    tomb = redis.call('SISMEMBER', s.stale, mem[mi]) == 1
    s.tomb[mi] = tomb
  end
  return tomb
end

-- The caller's cold look-up c of a member for period s (see "cold" above): its encoded cold
-- score and true when it has one; then whether the look-up is missing or stale (made before
-- the period's spill generation moved) and must be made again.
local function looked_up(s, c)
  if c == '?' then return nil, false, true end
  local colon = string.find(c, ':', 2, true)
  local seen = string.sub(c, 2, (colon or 0) - 1)
  if seen ~= s.gen then return nil, false, true end
  if byte(c, 1) == 112 then  -- "p<gen>:<encoded>"
    return tonumber(string.sub(c, colon + 1)), true, false
  end
  return nil, false, false
end

-- First pass: every used period's new score in the scratch plan, writing nothing. Returns a
-- refusal (range, span), else nil and the periods whose cold rows must be looked up ({slot,
-- gen} each; nil: none), which stop the planning but not the finding of the others.
local function plan_event(mi, used, cold, nused, value, at, forced)
  local missing
  for i = 1, nused do
    local j = used and used[i] or i
    local s = slots[j]
    local current = s.score[mi]
    local from_cold, again = false, false
    if not current and s.spilled and not tombstone(s, mi) then
      current, from_cold, again = looked_up(s, cold and cold[i] or '?')
      if again then
        missing = missing or {}
        missing[#missing + 1] = {j, s.gen}
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
  return nil, missing
end

-- The answer "cold" for the missing look-ups; with hold, spills of those periods hold off
-- removing members for 2 seconds meanwhile.
local function ask_cold(missing)
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

-- Second pass: the plan written to the periods' score tables. Returns the answer's points
-- (nil: not wanted) and the rehydration mask.
local function commit_plan(mi, used, nused)
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
  return out, mask
end

-- Event e (of member number mi), unless a refusal comes first. forced: a coalesced replace
-- whose value changed within it (see order_token).
local function apply_event(e, mi, forced)
  local used, cold = ev_used[e], ev_cold[e]
  local nused = used and #used or nslots
  if any_refused then
    local refusal = refused_period(used, nused)
    if refusal then return refusal end
  end
  local event_id = ev_id[e]
  if event_id and seen_ids[event_id] then return {'dup'} end
  local refusal, missing = plan_event(mi, used, cold, nused, ev_value[e], ev_at[e], forced)
  if refusal then return refusal end
  if missing then return ask_cold(missing) end
  if hold and cold then
    -- This writer is done with its look-ups: let spills remove members again.
    for i = 1, nused do
      if cold[i] ~= '?' then redis.call('HDEL', slots[used[i]].meta, 'hold_until') end
    end
  end
  local out, mask = commit_plan(mi, used, nused)
  if event_id then
    seen_ids[event_id] = true
    new_ids[#new_ids + 1] = event_id
  end
  if not out then return mask, true end
  out[1] = mask
  return out, true
end
