-- Part of update.lua (joined into it by bk_embed when the build embeds it): with "r" in
-- fields (a call of one event, Leaderboards::write), its member's standing in every period of
-- the call, read in the same atomic step as the write, so that the caller ranks the member
-- before and after the event without another round trip (service/live_reads.h,
-- update_standings). Only calls that ask for it pay for it: ingest never does.
-- Per slot: {before, before_better, after, after_better, spilled, cold_bound, gen, stale_read,
-- stale...}:
--   before / after  the member's encoded score right before / after the event ("": none); a
--     member the event rehydrated was cold before: before is its cold score
--   before_better / after_better  the hot members scored strictly below each (others only)
--   spilled  1 when the cold tier may hold members of the period, else 0
--   cold_bound  meta cold_bound of a spilled period ("": none; see spill_remove.lua)
--   gen  "<spill gen>:<rehydrate gen>" (read_state.lua's), after the event
--   stale_read  1 when a score lies beyond the hot part (spilled, and no bound or not below
--     it): then the stale set's members follow (read_state.lua's hot_and_stale)

-- The member's hot score in each slot as read, before anything is written: text, false when
-- it is not hot, nil for a slot its event does not use.
local function hot_scores_read()
  local out = {}
  for j = 1, nslots do
    local s = slots[j]
    local numbers = s.read_numbers
    if #s.read_members > 0 and (not numbers or numbers[1] == 1) then out[j] = s.found[1] end
  end
  return out
end

-- The cold score the event rehydrated slot j from (nil: it did not rehydrate there).
local function rehydrated_from(j)
  local r = results[1]
  local mask = type(r) == 'table' and r[1] or r
  if type(mask) ~= 'number' then return nil end  -- not applied
  local used, i = ev_used[1], j
  if used then
    i = nil
    for k = 1, #used do
      if used[k] == j then i = k end
    end
    if not i then return nil end
  end
  if floor(mask / 2 ^ (i - 1)) % 2 == 0 then return nil end
  return (looked_up(slots[j], ev_cold[1][i]))
end

-- Slot j's standing (see above); before: the hot score as read (hot_scores_read).
local function standing_of(j, before)
  local s = slots[j]
  local key = s.key
  before = (before and before + 0) or rehydrated_from(j)
  local after = redis.call('ZSCORE', key, mem[1])
  after = after and after + 0
  local after_better = after and redis.call('ZCOUNT', key, '-inf', '(' .. fmt(after)) or 0
  local before_better = 0
  if before then
    -- Counted after the write: the member itself is counted when it moved below before.
    before_better = redis.call('ZCOUNT', key, '-inf', '(' .. fmt(before))
    if after and after < before then before_better = before_better - 1 end
  end
  local m = redis.call('HMGET', s.meta, 'gen', 'rgen', 'cold_bound')
  local bound = s.spilled and m[3] and tonumber(m[3]) or nil
  local out = {before and fmt(before) or '', before_better, after and fmt(after) or '',
               after_better, s.spilled and 1 or 0, bound and fmt(bound) or '',
               (m[1] or '0') .. ':' .. (m[2] or '0'), 0}
  local function beyond(x) return x and (not bound or x >= bound) end
  if s.spilled and (beyond(before) or beyond(after)) then
    out[8] = 1
    for _, member in ipairs(redis.call('SMEMBERS', s.stale)) do out[#out + 1] = member end
  end
  return out
end

-- The call's reply with the standings after it (see Returns).
local function standings_reply(reply, before_hot)
  local out = {reply}
  for j = 1, nslots do out[j + 1] = standing_of(j, before_hot[j]) end
  return out
end
