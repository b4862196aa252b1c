-- Spill, step 1: mark the period spilled, so that from now on an update of a member that is
-- not hot consults the cold tier first (protocol 2). Idempotent.
-- KEYS[1] meta HASH, KEYS[2] live ZSET. ARGV[1] expire_at_ms (the live key's).
-- Returns the live key's size, or -1 when the period is closed (being archived): a spill
-- must never move members under an archive.
if redis.call('HGET', KEYS[1], 'closed') == '1' then return -1 end
redis.call('HSET', KEYS[1], 'spilled', '1')
if redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIREAT', KEYS[1], ARGV[1]) end
return redis.call('ZCARD', KEYS[2])
