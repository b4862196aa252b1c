-- Part of update.lua (joined into it by bk_embed when the build embeds it): the fast path,
-- the common call applied period by period.

-- Whether the call is the common one (see apply_all_at_once), before anything is computed.
local function common_call()
  if has_used or nbuckets > 0 or any_refused or checking or any_banned or next(held) then
    return false
  end
  for j = 1, nslots do
    if slots[j].spilled then return false end
  end
  if policy == 'r' and has_token then
    for e = 1, nevents do
      if merged(ev_token[e]) then return false end
    end
  end
  return true
end

-- Every event applied to period s, in its score table (from then on, s.found is gone): true
-- and the events' points (nil unless wanted), or false at the first refusal.
local function apply_period_at_once(s)
  -- The arithmetic works on q, the score without its time part (see "Scores"): q = q0 +
  -- sgn * points, so the range check is 0 <= q <= width, a better value has the smaller q,
  -- and an increment adds sgn * value to it. Everything the loop reads is a local.
  local inc, best, tied = policy == 'i', policy == 'b', tie ~= 'n'
  local q0, sgn, width = desc and maxp or -minp, desc and -1 or 1, maxp - minp
  local ev_mi, ev_value, ev_at = ev_mi, ev_value, ev_at
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
    if q < 0 or q > width then return false end
    if changed then
      local time_part = 0
      if tied then
        local d = ev_at[e] - start
        local units = (d - d % res) / res
        if units < 0 or units > span then return false end
        time_part = tbase + tsgn * units
      end
      score[mi] = q * n + time_part
      dirty[mi] = true
    end
    if points_j then points_j[e] = (q - q0) * sgn end
  end
  return true, points_j
end

-- The fast path's reply with points: one flat array, event by event (a table per event would
-- cost more than the arithmetic: built here and again by Redis when it converts the reply).
local function flat_points_of(points_of)
  local flat, k = {'points'}, 1
  for e = 1, nevents do
    for j = 1, nslots do
      k = k + 1
      flat[k] = points_of[j][e]
    end
  end
  return flat
end

-- The common call, applied period by period: every event uses every period, none of them
-- spilled, closed or expired, no event ids, no holds, no entry read again, and no coalesced
-- replace. Then every event applies unless one would be refused (range, span): true when it
-- applied them all, with exactly the writes and replies apply_event would give one by one;
-- false, having written nothing, when the general path must run instead. The score
-- arithmetic is plan_event's, written again on purpose in fewer steps (a function call per
-- event and period costs as much as the arithmetic); the coalescing property test holds the
-- two paths to the same boards.
-- The second result is true when it gave up after it began: the scores as read are gone.
local function apply_all_at_once()
  if not common_call() then return false, false end
  local points_of = {}  -- per period, per event: its points (when the caller wants them)
  for j = 1, nslots do
    local applied, points_j = apply_period_at_once(slots[j])
    if not applied then return false, true end
    points_of[j] = points_j
  end
  if want_points then flat_points = flat_points_of(points_of) end
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
