-- Part of update.lua (joined into it by bk_embed when the build embeds it): what the call
-- reads before it applies anything: scores, applied event ids, in-flight markers, holds.

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
