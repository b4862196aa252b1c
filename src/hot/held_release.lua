-- Compare-and-delete on a hash: deletes each field that still holds the given value.
-- Releases the holds of events that were resolved without reaching the update script
-- (refused before it: malformed for the board, too late, ...): only where the member is
-- still held by that very event. And drops the profiles tick moved to PostgreSQL: only
-- those not set again meanwhile.
-- KEYS[1] the HASH (the board's held, names or metadata). ARGV: field value field value ...
-- Returns how many fields were deleted.
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    n = n + redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return n
