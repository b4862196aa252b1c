-- Part of update.lua (joined into it by bk_embed when the build embeds it): on a league board
-- (core/league.h), a member written to a period for the first time takes a seat there, in the
-- same atomic step as its points. Only league boards send these keys and arguments.
-- KEYS after the slots' keys: per slot j its :seats ZSET (member -> division * 2^32 + place)
--   and its :waiting ZSET (member -> first event ms), then the board's :divisions HASH
--   (field "" the close count it was copied at, field <member> its division's index).
-- ARGV after the events: start (the division of a member :divisions lacks). The cohort size
-- is not needed here: a place is a place, cohorts are cut from places when read.
-- A period's cohorts are open once tick wrote its :meta field "league" equal to the
-- divisions' field "" (every earlier period of the board closed, the divisions copied after
-- it, the seats back after a loss of data): then a seat goes to the member's division's
-- filling cohort, place = HINCRBY of the :meta field "fill:<division>", so no cohort ever
-- holds more than cohort_size however writers race (the script is atomic). Before, the member
-- waits in :waiting by its first event's ms, and tick seats the waiting in that order.

local league_key0 = slot_key0 + 3 * nslots  -- KEYS before the league keys
local league = #KEYS > league_key0
local league_start = ARGV[a]

-- Seats `names` (members without one, in call order) in their divisions' filling cohorts:
-- one HMGET of their divisions, one HINCRBY per division for all its new places, one ZADD.
local function seat(s, seats_key, divisions_key, names)
  local divs = each_chunk('HMGET', divisions_key, names, true)
  local need = {}  -- division -> new seats
  for i = 1, #names do
    local d = divs[i] or league_start
    divs[i] = d
    need[d] = (need[d] or 0) + 1
  end
  local place = {}  -- division -> the place before its first new seat
  for d, n in pairs(need) do place[d] = redis.call('HINCRBY', s.meta, 'fill:' .. d, n) - n end
  local args = {}
  for i, name in ipairs(names) do
    local d = divs[i]
    place[d] = place[d] + 1
    args[#args + 1] = fmt(d * 4294967296 + place[d])
    args[#args + 1] = name
  end
  each_chunk('ZADD', seats_key, args, false)
end

local function seat_members(j, s)
  local written, first_at = {}, {}
  for e = 1, nevents do
    local mi = ev_mi[e]
    if s.dirty[mi] and not first_at[mi] then
      written[#written + 1] = mi
      first_at[mi] = ev_at[e]
    end
  end
  if #written == 0 then return end
  local seats_key, waiting_key = KEYS[league_key0 + 2 * j - 1], KEYS[league_key0 + 2 * j]
  local divisions_key = KEYS[league_key0 + 2 * nslots + 1]
  local names = {}
  for i, mi in ipairs(written) do names[i] = mem[mi] end
  local seated = each_chunk('ZMSCORE', seats_key, names, true)
  local new = {}
  for i, mi in ipairs(written) do
    if not seated[i] then new[#new + 1] = mi end
  end
  -- Most calls of a busy board seat nobody: they stop here, having read the seats alone.
  if #new == 0 then return end
  local opened = redis.call('HGET', s.meta, 'league')
  if opened and opened == redis.call('HGET', divisions_key, '') then
    local new_names = {}
    for i, mi in ipairs(new) do new_names[i] = mem[mi] end
    seat(s, seats_key, divisions_key, new_names)
    expire_with_key(s, seats_key)
  else
    for _, mi in ipairs(new) do
      redis.call('ZADD', waiting_key, 'NX', fmt(first_at[mi]), mem[mi])
    end
    expire_with_key(s, waiting_key)
  end
end

local function seat_league()
  if not league then return end
  for j = 1, nslots do seat_members(j, slots[j]) end
end
