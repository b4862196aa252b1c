-- Drop, last step on the board's slot (after period_reset.lua emptied each of its periods):
-- deletes the board's own keys. If the registry holds a period the caller did not empty (an
-- event created it meanwhile), nothing is deleted: the caller empties it and calls again, so
-- no period's keys are left behind without a registry entry (tick would never archive them).
-- Kept: the bans HASH (a board started again keeps its cheaters out), the event id buckets
-- and in-flight markers (they expire or are pruned on their own).
-- KEYS[1] registry ZSET, KEYS[2] sync marker, KEYS[3] held HASH, KEYS[4] busy HASH,
-- KEYS[5] names HASH, KEYS[6] metadata HASH, KEYS[7] a league's divisions HASH (a dropped
-- league starts again from its start division: PostgreSQL's divisions go with it).
-- ARGV: the registry members "<period>:<id>" the caller emptied.
-- Returns {"again", member...} (nothing deleted) or {profile fields removed, keys deleted};
-- a profile hash's "" field is its marker, not a profile.
local emptied = {}
for i = 1, #ARGV do emptied[ARGV[i]] = true end
local missing = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if not emptied[m] then missing[#missing + 1] = m end
end
if #missing > 0 then
  table.insert(missing, 1, 'again')
  return missing
end
local profiles = 0
for i = 5, 6 do
  profiles = profiles + redis.call('HLEN', KEYS[i]) - redis.call('HEXISTS', KEYS[i], '')
end
return {profiles, redis.call('UNLINK', unpack(KEYS))}
