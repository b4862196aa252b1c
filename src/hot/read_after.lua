-- The hot members listed strictly after a listing key (e, m), read atomically with where that
-- key sits now: the next page of a cursor starts right after its row whatever moved since
-- (the key's member need not be on the board any more). Members with equal scores are
-- ordered by member bytes; the key's place among them is found by a binary search over
-- ranks, so ties cost O(log n) however many there are.
-- KEYS[1] live ZSET, KEYS[2] meta HASH, KEYS[3] stale SET, KEYS[4] the board's sync marker;
-- optional KEYS[5], KEYS[6] the board's names and metadata hashes (the entries' profiles).
-- ARGV: e m count check_synced ("1": an unsynced board counts as spilled: Redis may have lost
-- what spilled).
-- Returns {gen:rgen, cold, through, better, size, spilled, nstale, hot_and_stale...,
--          n, member, score, ... (n entries)
--          [, names marker, metadata marker, name, metadata, ... (per entry)]}:
-- cold "1" when the cold tier is needed (the period has spilled and the entries read do not
-- all lie before its cold members: cold_bound, the best score a spill moved out, see
-- spill_remove.lua), through the hot members listed at or before the key, better those
-- with a score below e, size the live key's size, spilled "1" when the cold tier may hold
-- members (size is then not the period's count); hot_and_stale (the stale set: members whose
-- cold rows must be skipped) only when cold is "1"; then up to `count` entries after the key,
-- and with KEYS[5] their profiles as read_state.lua returns them (a page that Redis alone
-- answers costs one round trip).
-- #include listed_profiles.lua
local e, m, count = ARGV[1], ARGV[2], tonumber(ARGV[3])
-- Bytewise comparison: Lua's "<" on strings follows the server's locale (strcoll).
local function bytes_less(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local meta = redis.call('HMGET', KEYS[2], 'gen', 'rgen', 'spilled', 'cold_bound')
local unsynced = ARGV[4] == '1' and redis.call('EXISTS', KEYS[4]) == 0
local spilled = meta[3] == '1' or unsynced
local bound = (spilled and not unsynced and meta[4]) and tonumber(meta[4]) or nil
-- The members with score e occupy ranks [better, same_end); those up to m come first.
local better = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. e)
local lo, hi = better, redis.call('ZCOUNT', KEYS[1], '-inf', e)
while lo < hi do
  local mid = math.floor((lo + hi) / 2)
  if bytes_less(m, redis.call('ZRANGE', KEYS[1], mid, mid)[1]) then hi = mid else lo = mid + 1 end
end
local through = lo
local entries = {}
if count > 0 then entries = redis.call('ZRANGE', KEYS[1], through, through + count - 1, 'WITHSCORES') end
local cold = spilled and
  (bound == nil or #entries < 2 * count or tonumber(entries[#entries]) >= bound)
local out = {(meta[1] or '0') .. ':' .. (meta[2] or '0'), cold and '1' or '0', through, better,
             redis.call('ZCARD', KEYS[1]), spilled and '1' or '0', 0}
if cold then
  -- Every member of the stale set: a hot one's cold row is outdated (the hot value wins), a
  -- tombstone's (in the set, not hot: a removed member) is void. Both rows are skipped.
  for _, s in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    out[#out + 1] = s
    out[7] = out[7] + 1
  end
end
out[#out + 1] = #entries / 2
for _, v in ipairs(entries) do out[#out + 1] = v end
if KEYS[5] then append_listed_profiles(out, KEYS[5], KEYS[6], entries) end
return out
