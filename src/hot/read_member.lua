-- One member's score and competition rank, and the board's size, read atomically.
-- KEYS[1] the live ZSET. ARGV: member. Returns {rank, score, size} or {} when absent.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return {} end
local better = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. score)
return {better + 1, score, redis.call('ZCARD', KEYS[1])}
