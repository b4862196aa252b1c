-- The tombstones of one period: members of its :stale set that are not in its live ZSET
-- (removed members whose cold rows are void, see member_remove.lua). tick's spill deletes
-- their cold rows; the archive leaves them out.
-- KEYS[1] live ZSET, KEYS[2] stale SET. Returns the members.
local stale = redis.call('SMEMBERS', KEYS[2])
local out = {}
for i = 1, #stale, 1000 do
  local chunk = {}
  for k = i, math.min(i + 999, #stale) do chunk[#chunk + 1] = stale[k] end
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(chunk))
  for k = 1, #chunk do
    if not scores[k] then out[#out + 1] = chunk[k] end
  end
end
return out
