-- Spill, step 3 (after the cold rows are committed): remove each member from the hot key
-- only if its score is still the one that was spilled. A member updated meanwhile stays hot
-- (and in the stale set: its cold row is outdated and the hot value wins); one removed
-- meanwhile stays in the stale set too (a tombstone: its cold row is void). Removing anyone
-- bumps the period's spill generation, which tells a concurrent rehydrating writer that its
-- cold look-up may be out of date.
-- The best score removed is kept in meta cold_bound (the lowest ever): a member that is not
-- hot but has a cold row got there through this script with the score it had, so hot members
-- scored below cold_bound are listed before every cold member, and reading them needs no cold
-- tier (read_range.lua and the other read scripts). The bound starts only at a period's first
-- removal (gen 0) on a synced board (after a data loss the sync marks a period with forgotten
-- cold rows recovered) that is not recovered: otherwise cold rows may exist that never passed
-- here, and the period stays without a bound (reads use both tiers).
-- A writer that kept losing the race to a busy spill may hold the period for a moment (meta
-- hold_until): then nothing is removed (the members stay hot for the next tick) and -1 is
-- returned.
-- KEYS[1] live ZSET, KEYS[2] stale SET, KEYS[3] meta HASH, KEYS[4] the board's sync marker.
-- ARGV: start (the position the members were taken from), then member score member score ...
-- Returns how many were removed, or -1 when held.
-- #include move_gen.lua
if redis.call('HGET', KEYS[3], 'closed') == '1' then return -1 end  -- being archived
local hold_until = redis.call('HGET', KEYS[3], 'hold_until')
if hold_until then
  local t = redis.call('TIME')
  if tonumber(hold_until) > tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then
    return -1
  end
end
local start = tonumber(ARGV[1])
local n = (#ARGV - 1) / 2
local removed = 0
local best = nil  -- the best (lowest) score removed
local function removing(score)
  local v = tonumber(score)
  if best == nil or v < best then best = v end
end
-- The common case: nobody wrote to the board meanwhile, so the same positions still hold
-- the same members with the same scores: one range removal instead of one per member.
local now = redis.call('ZRANGE', KEYS[1], start, start + n - 1, 'WITHSCORES')
local same = #now == 2 * n
for i = 1, #now do
  if not same then break end
  local given = ARGV[i + 1]
  same = now[i] == given or (i % 2 == 0 and tonumber(now[i]) == tonumber(given))
end
if same then
  redis.call('ZREMRANGEBYRANK', KEYS[1], start, start + n - 1)
  local members = {}
  for i = 2, #ARGV, 2 do
    members[#members + 1] = ARGV[i]
    removing(ARGV[i + 1])
  end
  for i = 1, #members, 5000 do
    redis.call('SREM', KEYS[2], unpack(members, i, math.min(i + 4999, #members)))
  end
  removed = n
else
  for i = 2, #ARGV, 2 do
    local member = ARGV[i]
    local score = redis.call('ZSCORE', KEYS[1], member)
    if score and tonumber(score) == tonumber(ARGV[i + 1]) then
      redis.call('ZREM', KEYS[1], member)
      redis.call('SREM', KEYS[2], member)
      removing(score)
      removed = removed + 1
    end
    -- A member taken that is not hot any more was removed meanwhile (member_remove.lua): it
    -- stays in the stale set, a tombstone, so the cold row just committed stays void (R2 or
    -- the next spill deletes it).
  end
end
if removed > 0 then
  local m = redis.call('HMGET', KEYS[3], 'gen', 'cold_bound', 'recovered')
  local first = (m[1] == false or m[1] == '0') and m[3] ~= '1' and
                redis.call('EXISTS', KEYS[4]) == 1
  if (m[2] and best < tonumber(m[2])) or (not m[2] and first) then
    redis.call('HSET', KEYS[3], 'cold_bound', string.format('%.17g', best))
  end
  move_gen(KEYS[3])
end
return removed
