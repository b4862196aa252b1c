-- Erase, step E3 (docs/architecture.md, "Moderation"): after the member was removed from the
-- board's live periods (E1) and its PostgreSQL rows were deleted (E2), the board's keys
-- forget it: its profile fields, its hold, its ban (the generation bumped, as an unban does,
-- so a sync in flight starts again) and, in each live period where it is not hot, its
-- tombstone. The tombstone's cold row is gone, so the tombstone goes too, and the period's
-- gen is bumped: a rehydrating writer holding a look-up made before E2 looks again instead
-- of writing the void row back. A member hot again (an event after E1) keeps its entry.
-- With the dry-run flag nothing is written: the script counts what the real run would
-- remove, and whether the member is hot in each period (the real run left that to E1).
--
-- KEYS[1] :names, KEYS[2] :metadata, KEYS[3] :held, KEYS[4] :bans, then per live period its
-- live ZSET, its :stale SET and its :meta HASH (3 keys each).
-- ARGV[1] the member, ARGV[2] "1" for a dry run, else "0", ARGV[3] "1" when E2 deleted the
-- member's ban row: the generation moves even if the cache did not hold the ban (a sync in
-- flight that read the row before E2 must not write it back).
-- Returns {profile fields, held entries, ban entries, then per period: hot entries (dry run;
-- 0 otherwise), tombstones cleared}.
-- #include move_gen.lua
local member, dry = ARGV[1], ARGV[2] == '1'

local function hdel(key)
  if dry then return redis.call('HEXISTS', key, member) end
  return redis.call('HDEL', key, member)
end

local profiles = hdel(KEYS[1]) + hdel(KEYS[2])
local held = hdel(KEYS[3])
local bans = hdel(KEYS[4])
if (bans > 0 or ARGV[3] == '1') and not dry then
  -- (A new generation starts at the server's clock: see member_remove.lua.)
  local t = redis.call('TIME')
  redis.call('HSETNX', KEYS[4], '', t[1] .. string.format('%06d', tonumber(t[2])))
  redis.call('HINCRBY', KEYS[4], '', 1)
end

local out = {profiles, held, bans}
for k = 5, #KEYS, 3 do
  local live, stale, meta = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  local hot = redis.call('ZSCORE', live, member) and 1 or 0
  local cleared = 0
  if hot == 0 and redis.call('SISMEMBER', stale, member) == 1 then
    cleared = 1
    if not dry then
      redis.call('SREM', stale, member)
      move_gen(meta)
    end
  end
  out[#out + 1] = dry and hot or 0
  out[#out + 1] = cleared
end
return out
