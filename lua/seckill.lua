-- seckill.lua: reserve one unit of a seckill voucher for one user, atomically.
--
-- KEYS[1]  voucher hash  <prefix>seckill:{<voucher>}:voucher  fields stock, begin_ms, end_ms
-- KEYS[2]  buyers hash   <prefix>seckill:{<voucher>}:buyers   field user id -> reservation
-- ARGV[1]  user id
-- ARGV[2]  order id
--
-- A buyer's reservation is "<order id>" (reserved), "<order id>:c" (confirmed
-- by the worker) or "<order id>:r" (released: a tombstone, which leaves the
-- user free to buy again; see seckill_release.lua).
--
-- The sale window is checked against the Redis server clock, so every API
-- instance judges it the same way. Both keys share the {<voucher>} hash tag.
--
-- Returns 0 accepted (stock decremented, buyer recorded with the order id),
--         1 sold out, 2 already bought, 3 not started, 4 ended, 5 unknown voucher.
local v = redis.call('HMGET', KEYS[1], 'stock', 'begin_ms', 'end_ms')
if not v[1] then
  return 5
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now < tonumber(v[2]) then
  return 3
end
if now >= tonumber(v[3]) then
  return 4
end
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if cur and string.sub(cur, -2) ~= ':r' then
  return 2
end
if tonumber(v[1]) <= 0 then
  return 1
end
redis.call('HINCRBY', KEYS[1], 'stock', -1)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 0
