-- Archive, last step (after the history rows are committed): free the hot keys and drop
-- the period from the registry. The :meta hash stays until its own TTL with closed=1, so
-- a late write can never recreate the period. Idempotent.
-- KEYS[1] live ZSET, KEYS[2] stale SET, KEYS[3] meta HASH, KEYS[4] registry.
-- ARGV[1] registry member "<period>:<id>". Returns how many keys were deleted.
-- The spill generation moves: a read that began while the period was live, and kept its cold
-- rows in memory (service/cold_index.h), must not use them without the :stale set.
-- #include move_gen.lua
redis.call('HSET', KEYS[3], 'closed', '1', 'archived', '1')
move_gen(KEYS[3])
local deleted = redis.call('UNLINK', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[4], ARGV[1])
return deleted
