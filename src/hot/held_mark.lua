-- Holds members whose event is waiting for the cold tier (PostgreSQL unreachable), so their
-- later events wait too and one member's events are applied in stream order. The first
-- (earliest) token of a member stays; the update script clears it when that event is
-- resolved. The hash expires after a week without new holds, so a held event that vanished
-- from its stream cannot block a member forever.
-- KEYS[1] the board's held HASH. ARGV: member token member token ...
-- Returns how many members were newly held.
local n = 0
for i = 1, #ARGV, 2 do
  n = n + redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[1], 7 * 24 * 3600 * 1000)
return n
