-- geo_add_if_indexed.lua: put a shop at its position in its type's GEO
-- index, only if that index exists. A missing index is rebuilt from MySQL by
-- its next reader; adding one member to it here would make a partial index
-- look complete.
--
-- KEYS[1]  the GEO index of the shop's type (<prefix>shops:geo:<type id>)
-- ARGV[1]  longitude
-- ARGV[2]  latitude
-- ARGV[3]  the shop id (the member)
--
-- Returns 1 when the index exists (the member is added or moved), 0 when it
-- does not (nothing written).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('GEOADD', KEYS[1], ARGV[1], ARGV[2], ARGV[3])
return 1
