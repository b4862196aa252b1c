-- Reset and drop, step T2 (after T1 deleted the period's cold rows in PostgreSQL, while the
-- caller holds the period's lock there, so no spill or archive of it runs): empties one
-- period of a board in Redis. Its next event creates the key again and re-registers it.
-- The :meta hash stays (with its TTL): it forgets the cold tier, and its generations move on
-- rather than start again, so a rehydrating writer holding a look-up from before looks again,
-- a merged read in flight reads again, and a cold summary cached by a long-running process
-- under an old generation can never match a new one (drop too: deleting the hash would
-- restart them at 0). Its closed / archived markers stay: an archive in progress still
-- refuses late writes.
-- KEYS[1] live ZSET, KEYS[2] stale SET, KEYS[3] meta HASH, KEYS[4] the board's registry.
-- ARGV[1] the registry member "<period>:<id>".
-- Returns how many hot members were removed.
-- #include move_gen.lua
local hot = redis.call('ZCARD', KEYS[1])
redis.call('UNLINK', KEYS[1], KEYS[2])
if redis.call('EXISTS', KEYS[3]) == 1 then
  -- Only an existing hash: a period never written has nothing in flight (and a hash made
  -- here would have no TTL).
  redis.call('HDEL', KEYS[3], 'spilled', 'cold_bound', 'recovered', 'hold_until')
  move_gen(KEYS[3])
  redis.call('HINCRBY', KEYS[3], 'rgen', 1)
end
redis.call('ZREM', KEYS[4], ARGV[1])
return hot
