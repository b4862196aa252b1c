-- Dead letters of one stream, each written and its entry acknowledged in the same script:
-- an entry is never acknowledged without its dead letter, nor left pending with its dead
-- letter written (a consumer killed between the two would have it dead-lettered twice).
-- (Under Redis Cluster the stream and its dead-letter stream must share a hash slot.)
--
-- KEYS[1] the stream, KEYS[2] its dead-letter stream. ARGV[1] the group, ARGV[2] the cap of
-- the dead-letter stream (MAXLEN ~), then per letter: the entry id, the reason, the number
-- of field strings that follow, and the entry's fields and values.
-- Returns per letter "" (written and acknowledged), "already acknowledged" (the entry was
-- no longer pending: another consumer that took it over dead-lettered it first; nothing is
-- written, so an entry never gets two dead letters) or the error that refused it (the entry
-- stays pending: nothing was written for it).
local out = {}

-- Whether entry `id` is still pending in the group (an error, such as a group that is gone,
-- counts as pending: the XACK below then says what is wrong).
local function still_pending(id)
  local p = redis.pcall('XPENDING', KEYS[1], ARGV[1], id, id, 1)
  return not (type(p) == 'table' and not p.err and #p == 0)
end

local a = 3
while a <= #ARGV do
  local id, n = ARGV[a], tonumber(ARGV[a + 2])
  local add = {'XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'reason', ARGV[a + 1], 'stream_id', id}
  for i = 1, n do add[#add + 1] = ARGV[a + 2 + i] end
  a = a + 3 + n
  if not still_pending(id) then
    out[#out + 1] = 'already acknowledged'
  else
    local r = redis.pcall(unpack(add))
    if type(r) == 'table' and r.err then
      out[#out + 1] = r.err
    else
      local acked = redis.pcall('XACK', KEYS[1], ARGV[1], id)
      if type(acked) == 'table' and acked.err then
        out[#out + 1] = 'dead letter written, entry not acknowledged: ' .. acked.err
      else
        out[#out + 1] = ''
      end
    end
  end
end
return out
