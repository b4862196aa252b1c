-- The tombstones of one period go, once their cold rows are deleted (tick's spill, under the
-- period lock, after cold::MemberRows::remove_void committed): each given member that is
-- still not hot leaves the :stale set, and the period's spill generation moves, so that a
-- rehydrating writer holding a look-up made before the rows were deleted looks again (and
-- finds no row) instead of writing the void row back. A member hot again meanwhile (an event
-- after its removal) stays in :stale: it may be hot and cold at once like any other.
-- Without this, :stale would keep every removed member until the period's keys go, and every
-- merged read would skip them all.
-- KEYS[1] live ZSET, KEYS[2] stale SET, KEYS[3] meta HASH. ARGV the members.
-- Returns how many tombstones went.
-- #include move_gen.lua
local cleared = 0
for i = 1, #ARGV, 1000 do
  local chunk = {}
  for k = i, math.min(i + 999, #ARGV) do chunk[#chunk + 1] = ARGV[k] end
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(chunk))
  for k = 1, #chunk do
    if not scores[k] then cleared = cleared + redis.call('SREM', KEYS[2], chunk[k]) end
  end
end
if cleared > 0 then move_gen(KEYS[3]) end
return cleared
