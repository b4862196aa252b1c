-- Tells Redis which periods of one board have cold rows and which members are banned
-- (PostgreSQL is the truth), then sets the board's sync marker. Run when the marker is missing
-- (Redis lost its data, the board is new, or a day has passed) and by every tick. A period
-- Redis had not marked spilled is marked spilled and recovered: updates consult the cold tier
-- for members that are not hot, and the archive records that the period's hot part may have
-- been lost. The bans hash is rebuilt from the list given, unless a ban or unban ran since the
-- caller read its generation (before it queried PostgreSQL): then nothing is written and the
-- caller syncs again. So the marker comes back only with the bans.
-- KEYS[1] the board's sync marker, KEYS[2] the board's bans HASH (see update.lua), KEYS[3..]
-- the :meta HASH of each period with cold rows.
-- ARGV[1] the bans generation the caller read before its query ("" when the field was
-- missing), ARGV[2] how many banned members follow (nb), ARGV[3 .. 2 + nb] the banned
-- members, then the expiry (epoch ms: period end + retention) of each of KEYS[3..] in turn.
-- Returns how many periods were newly marked recovered, or -1 ("again": nothing written).
local gen = redis.call('HGET', KEYS[2], '') or ''
if gen ~= ARGV[1] then return -1 end
local nb = tonumber(ARGV[2])
local recovered = 0
for i = 3, #KEYS do
  local meta = KEYS[i]
  if redis.call('HGET', meta, 'spilled') ~= '1' then
    redis.call('HSET', meta, 'spilled', '1', 'recovered', '1')
    recovered = recovered + 1
  end
  if redis.call('PTTL', meta) == -1 then redis.call('PEXPIREAT', meta, ARGV[2 + nb + i - 2]) end
end
-- A board that never had a ban gets no hash (the update script's HLEN answers 0 all the
-- same); once it has a generation the hash keeps it, so a sync that read it before can tell
-- it moved.
if nb > 0 or gen ~= '' then
  if gen == '' then  -- a new generation starts at the server's clock (see member_remove.lua)
    local t = redis.call('TIME')
    gen = t[1] .. string.format('%06d', tonumber(t[2]))
  end
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[2], '', gen)
end
for i = 3, 2 + nb, 1000 do
  local fields = {}
  for k = i, math.min(i + 999, 2 + nb) do
    fields[#fields + 1] = ARGV[k]
    fields[#fields + 1] = '1'
  end
  redis.call('HSET', KEYS[2], unpack(fields))
end
-- The marker lives a day: then the next update syncs again (one cheap query), which also
-- heals, within a day, a Redis rolled back to a snapshot older than a spill.
redis.call('SET', KEYS[1], '1', 'PX', 24 * 3600 * 1000)
return recovered
