-- Archive, step 1: close the period for writes (protocol 3). From now on the update script
-- refuses it; a rehydrating writer that was mid-way is refused too. Idempotent.
-- KEYS[1] meta HASH, KEYS[2] live ZSET. ARGV[1] expire_at_ms.
-- Returns {live key exists (1/0), its size}.
redis.call('HSET', KEYS[1], 'closed', '1')
if redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIREAT', KEYS[1], ARGV[1]) end
return {redis.call('EXISTS', KEYS[2]), redis.call('ZCARD', KEYS[2])}
