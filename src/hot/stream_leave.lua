-- Removes a consumer from its group, but only when nothing is pending at it: XGROUP
-- DELCONSUMER drops a consumer's pending entries, which nobody could then claim or
-- acknowledge. Looked at and deleted in one script, so nothing is delivered in between.
--
-- KEYS[1] the stream. ARGV[1] the group; ARGV[2] the consumer.
-- Returns 1: removed (or it was not there); 0: kept, entries are pending at it; -1: the
-- stream or the group does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local pending = redis.pcall('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])
if type(pending) == 'table' and pending.err then
  if string.sub(pending.err, 1, 7) == 'NOGROUP' then return -1 end
  return redis.error_reply(pending.err)
end
if #pending > 0 then return 0 end
redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
return 1
