-- One member's score and competition rank, and the board's size, read atomically.
-- KEYS[1] the live ZSET, KEYS[2] its meta HASH. ARGV: member.
-- Returns {"spilled"} when the period has spilled (the caller reads both tiers instead),
-- else {rank, score, size} or {} when absent.
if redis.call('HGET', KEYS[2], 'spilled') == '1' then return {'spilled'} end
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return {} end
local better = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. score)
return {better + 1, score, redis.call('ZCARD', KEYS[1])}
