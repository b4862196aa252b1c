-- Archive, step 1: close the period for writes (protocol 3). From now on the update script
-- refuses it; a rehydrating writer that was mid-way is refused too. Idempotent.
-- KEYS[1] meta HASH, KEYS[2] live ZSET. ARGV[1] expire_at_ms.
-- Returns {live key exists (1/0), its size, recovered (1/0)}: recovered says Redis had lost
-- the period's data once (a sync found cold rows it did not know of), so its hot part may
-- be missing points.
redis.call('HSET', KEYS[1], 'closed', '1')
if redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIREAT', KEYS[1], ARGV[1]) end
local recovered = redis.call('HGET', KEYS[1], 'recovered') == '1' and 1 or 0
return {redis.call('EXISTS', KEYS[2]), redis.call('ZCARD', KEYS[2]), recovered}
