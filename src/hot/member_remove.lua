-- Remove, step R1 (docs/architecture.md, "Moderation"): takes one member off periods of one
-- board atomically, optionally banning it in the same step. Every key shares the board's hash
-- tag. Per period: ZREM from the live key; where the period may have cold rows (spilled, or
-- the board is not synced) the member is entered in :stale while it is not hot: a tombstone.
-- From then on reads skip its cold row, the update script treats it as having none (a later
-- event starts it from zero; a cold value looked up before this step is ignored), the archive
-- excludes the row and the next spill deletes it. rgen moves so that merged reads in flight
-- read again. With the ban flag the bans hash gains the member and its generation moves, in
-- the same step: every event applied after this script is refused, every one applied before
-- it is removed by it.
-- KEYS[1] the board's period registry, KEYS[2] its sync marker, KEYS[3] its bans HASH, then 3
-- per period: live ZSET, :meta HASH, :stale SET.
-- ARGV[1] member, ARGV[2] ban ("1" or "0"), ARGV[3] all ("1": the periods given are every
-- live period the caller knows: check the registry holds no other), ARGV[4] how many registry
-- members follow that the caller saw and leaves alone (periods its config does not know),
-- then those, then per period: its registry member and its expiry (epoch ms: end + retention).
-- Returns {"again", registry members...} when `all` and the registry holds periods the caller
-- did not pass (nothing written: call again with them); else {"ok", then per period: removed
-- from the hot key (0/1), tombstoned (0/1)}.
local member, ban, all = ARGV[1], ARGV[2] == '1', ARGV[3] == '1'
local nperiods = (#KEYS - 3) / 3
local nseen = tonumber(ARGV[4])
local p0 = 4 + nseen  -- ARGV before the periods' pairs
if all then
  local given = {}
  for i = 5, p0 do given[ARGV[i]] = true end
  for j = 1, nperiods do given[ARGV[p0 + 2 * j - 1]] = true end
  local missing = {'again'}
  for _, reg in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    if not given[reg] then missing[#missing + 1] = reg end
  end
  if #missing > 1 then return missing end
end
local unsynced = redis.call('EXISTS', KEYS[2]) == 0
local out = {'ok'}
for j = 1, nperiods do
  local live, meta, stale = KEYS[3 * j + 1], KEYS[3 * j + 2], KEYS[3 * j + 3]
  local expire_at = ARGV[p0 + 2 * j]
  local removed = redis.call('ZREM', live, member)
  local tomb = 0
  if unsynced or redis.call('HGET', meta, 'spilled') == '1' then
    redis.call('SADD', stale, member)
    if redis.call('PTTL', stale) == -1 then redis.call('PEXPIREAT', stale, expire_at) end
    redis.call('HINCRBY', meta, 'rgen', 1)
    if redis.call('PTTL', meta) == -1 then redis.call('PEXPIREAT', meta, expire_at) end
    tomb = 1
  end
  out[#out + 1] = removed
  out[#out + 1] = tomb
end
if ban then
  redis.call('HSET', KEYS[3], member, '1')
  -- A new generation starts at the server's clock (microseconds), never at 1 again after
  -- Redis lost its data: a board sync that read one before the loss must see it moved.
  local t = redis.call('TIME')
  redis.call('HSETNX', KEYS[3], '', t[1] .. string.format('%06d', tonumber(t[2])))
  redis.call('HINCRBY', KEYS[3], '', 1)
end
return out
