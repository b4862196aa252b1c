-- What a read of a spilled period needs from Redis in one atomic step: the spill
-- generation (to detect a spill racing the read), whether the period was ever spilled,
-- the member's hot score (if a member is given), and the members that are hot while a cold
-- row may exist for them (their cold rows must be skipped: the hot value wins).
-- KEYS[1] live ZSET, KEYS[2] meta HASH, KEYS[3] stale SET. ARGV[1] member or "".
-- Returns {gen:rgen, spilled, member_score or "", hot_and_stale...}.
local meta = redis.call('HMGET', KEYS[2], 'gen', 'rgen', 'spilled')
-- "<spill gen>:<rehydrate gen>": either moving means the tiers changed under a read.
local out = {(meta[1] or '0') .. ':' .. (meta[2] or '0'), meta[3] or '0', ''}
if ARGV[1] ~= '' then out[3] = redis.call('ZSCORE', KEYS[1], ARGV[1]) or '' end
for _, m in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  if redis.call('ZSCORE', KEYS[1], m) then out[#out + 1] = m end
end
return out
