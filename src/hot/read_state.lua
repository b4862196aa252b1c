-- What a read of a spilled period needs from Redis in one atomic step: the spill
-- generation (to detect a spill racing the read), whether the cold tier may hold members,
-- the score below which hot members are listed before every cold member (meta cold_bound,
-- see spill_remove.lua; only when it can be trusted), the member's hot score (if a member is
-- given), the members whose cold rows must be skipped (the stale set: hot members, whose hot
-- value wins, and tombstones, removed members whose row is void), the live key's size and
-- its first members in listing order.
-- KEYS[1] live ZSET, KEYS[2] meta HASH, KEYS[3] stale SET, KEYS[4] the board's sync marker;
-- optional KEYS[5], KEYS[6] the board's names and metadata hashes (profiles of the first
-- members).
-- ARGV[1] member or "", ARGV[2] check_synced ("1": an unsynced board counts as spilled: Redis
-- may have lost what spilled), ARGV[3] how many first members to return (0: none).
-- Returns {gen:rgen, spilled, cold_bound or "", member_score or "", size, n,
--          hot_and_stale (n of them)...,
--          member, score, ... (the first members)
--          [, names marker, metadata marker (1: some of that field are in PostgreSQL),
--           name, metadata, ... (per first member)]}.
-- #include listed_profiles.lua
local meta = redis.call('HMGET', KEYS[2], 'gen', 'rgen', 'spilled', 'cold_bound')
local unsynced = ARGV[2] == '1' and redis.call('EXISTS', KEYS[4]) == 0
local spilled = meta[3] == '1' or unsynced
local bound = (meta[3] == '1' and not unsynced and meta[4]) or ''
-- "<spill gen>:<rehydrate gen>": either moving means the tiers changed under a read.
local out = {(meta[1] or '0') .. ':' .. (meta[2] or '0'), spilled and '1' or '0', bound, '',
             redis.call('ZCARD', KEYS[1]), 0}
if ARGV[1] ~= '' then out[4] = redis.call('ZSCORE', KEYS[1], ARGV[1]) or '' end
-- Every member of the stale set: a hot one's cold row is outdated (the hot value wins), a
-- tombstone's (in the set, not hot: a removed member, see member_remove.lua) is void. Both
-- rows are skipped and not counted.
for _, m in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  out[#out + 1] = m
  out[6] = out[6] + 1
end
local n = tonumber(ARGV[3])
if n > 0 then
  local head = redis.call('ZRANGE', KEYS[1], 0, n - 1, 'WITHSCORES')
  for _, v in ipairs(head) do out[#out + 1] = v end
  -- The first members' profiles too.
  if KEYS[5] then append_listed_profiles(out, KEYS[5], KEYS[6], head) end
end
return out
