-- Included by the read scripts that return the profiles of the members they list (bk_embed's
-- "-- #include"): appends to `out` the markers of the names and metadata hashes (1: some of
-- that field are in PostgreSQL), then per member of `flat` ({member, score, ...}) its name
-- and metadata (false: none in Redis). hot/read_protocol.cpp's listed_profiles reads them.
local function append_listed_profiles(out, names, metadata, flat)
  out[#out + 1] = redis.call('HEXISTS', names, '')
  out[#out + 1] = redis.call('HEXISTS', metadata, '')
  for i = 1, #flat, 2 do
    out[#out + 1] = redis.call('HGET', names, flat[i])
    out[#out + 1] = redis.call('HGET', metadata, flat[i])
  end
end
