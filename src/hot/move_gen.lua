-- Included by the scripts that move a period's spill generation (bk_embed's "-- #include").
-- Moves it by one. One that starts (the hash had none: a new period, or Redis lost its data)
-- starts at the server's clock in microseconds, never at a number the period had before the
-- loss: serve keeps cold indexes by it (service/cold_index.h).
local function move_gen(meta)
  if redis.call('HEXISTS', meta, 'gen') == 1 then return redis.call('HINCRBY', meta, 'gen', 1) end
  local t = redis.call('TIME')
  redis.call('HSET', meta, 'gen', t[1] .. string.format('%06d', tonumber(t[2])))
end
