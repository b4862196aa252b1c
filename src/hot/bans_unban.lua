-- Unban, step U2 (after the ban's row left PostgreSQL): the member leaves the board's bans
-- hash and the bans generation moves (a board sync that read the hash before answers
-- "again", see board_sync.lua).
-- KEYS[1] the board's bans HASH. ARGV[1] the member.
-- Returns 1 when the member was in the hash, else 0.
local removed = redis.call('HDEL', KEYS[1], ARGV[1])
-- (A new generation starts at the server's clock: see member_remove.lua.)
local t = redis.call('TIME')
redis.call('HSETNX', KEYS[1], '', t[1] .. string.format('%06d', tonumber(t[2])))
redis.call('HINCRBY', KEYS[1], '', 1)
return removed
