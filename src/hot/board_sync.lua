-- Tells Redis which periods of one board have cold rows (PostgreSQL is the truth), then sets
-- the board's sync marker. Run when the marker is missing (Redis lost its data, the board is
-- new, or a day has passed) and by every tick. A period Redis had not marked spilled is
-- marked spilled and recovered: updates consult the cold tier for members that are not hot,
-- and the archive records that the period's hot part may have been lost.
-- KEYS[1] the board's sync marker, KEYS[2..] the :meta HASH of each period with cold rows.
-- ARGV[i] the expiry (epoch ms: period end + retention) of KEYS[i + 1].
-- Returns how many periods were newly marked recovered.
local recovered = 0
for i = 2, #KEYS do
  local meta = KEYS[i]
  if redis.call('HGET', meta, 'spilled') ~= '1' then
    redis.call('HSET', meta, 'spilled', '1', 'recovered', '1')
    recovered = recovered + 1
  end
  if redis.call('PTTL', meta) == -1 then redis.call('PEXPIREAT', meta, ARGV[i - 1]) end
end
-- The marker lives a day: then the next update syncs again (one cheap query), which also
-- heals, within a day, a Redis rolled back to a snapshot older than a spill.
redis.call('SET', KEYS[1], '1', 'PX', 24 * 3600 * 1000)
return recovered
