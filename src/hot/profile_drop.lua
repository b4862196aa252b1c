-- Member profiles (tick), after their values were committed to PostgreSQL: sets the board's
-- marker (field "" of the names hash: "some profiles are in PostgreSQL", which readers check
-- before looking there), then deletes each field that still holds the value moved; one set
-- meanwhile stays (it is newer than PostgreSQL's).
-- KEYS[1] the profile hash (names or metadata), KEYS[2] the names hash.
-- ARGV: member value member value ... Returns how many fields were deleted.
redis.call('HSET', KEYS[2], '', '1')
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    n = n + redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return n
