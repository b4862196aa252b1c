-- Releases the holds of events that were resolved without reaching the update script
-- (refused before it: malformed for the board, too late, ...): only where the member is
-- still held by that very event.
-- KEYS[1] the board's held HASH. ARGV: member token member token ...
-- Returns how many holds were released.
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    n = n + redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return n
