-- Included by the scripts that move a period's spill generation (bk_embed's "-- #include").
-- The new one is the larger of the old one plus one and Redis's clock in microseconds: a
-- generation that starts (a new period, or Redis lost its data) or resumes from an older
-- snapshot never takes a number the period had before, so an index kept by it
-- (service/cold_index.h) cannot match other rows.
local function move_gen(meta)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local gen = math.max((tonumber(redis.call('HGET', meta, 'gen')) or 0) + 1, now)
  redis.call('HSET', meta, 'gen', string.format('%.0f', gen))
end
