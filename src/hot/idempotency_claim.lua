-- Claims the idempotency keys of keyed writes to ONE board (hot/idempotency.h): beside the
-- event ids (update.lua), each key's request fingerprint is remembered in HASHes per time
-- bucket (the id buckets' numbering, hot/protocol.h), so that a key sent again with another
-- request is told from a retry of the same one. Atomic: of two requests that claim one key at
-- once, one claims it and the other finds it.
-- KEYS: the board's fingerprint buckets that may hold a key, the current one first
-- ARGV[1]: the current bucket's TTL in ms (set when this call creates it); then pairs of
--   key, fingerprint
-- Returns per pair: 1 claimed now (not seen in any bucket), 2 held by the same fingerprint
-- (a retry), 0 held by another fingerprint (refuse the request).
local out = {}
for i = 2, #ARGV, 2 do
  local key, fp = ARGV[i], ARGV[i + 1]
  local held, found = false, 0
  for k = 1, #KEYS do
    held = redis.call('HGET', KEYS[k], key)
    if held then
      found = k
      break
    end
  end
  -- A claim, or a retry found in an older bucket, is (re)written to the current one: the
  -- fingerprint lives as long as the event id the retry may write now.
  if not held or (held == fp and found > 1) then
    redis.call('HSET', KEYS[1], key, fp)
    if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
  end
  if not held then
    out[#out + 1] = 1
  elseif held == fp then
    out[#out + 1] = 2
  else
    out[#out + 1] = 0
  end
end
return out
