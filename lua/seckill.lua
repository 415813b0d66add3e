-- seckill.lua: reserve one unit of a seckill voucher for one user, atomically.
-- ratelimit.lua (window_admit, now_ms) is prepended to this script.
--
-- KEYS[1]  voucher hash  <prefix>seckill:{<voucher>}:voucher  fields stock, begin_ms, end_ms
-- KEYS[2]  buyers hash   <prefix>seckill:{<voucher>}:buyers   field user id -> reservation
-- KEYS[3..] the shopper's sliding windows, if the route is limited
--           <prefix>seckill:{<voucher>}:limit:<subject>:<value>
-- ARGV[1]  user id
-- ARGV[2]  order id (also the request's member in the windows)
-- ARGV[2i - 3], ARGV[2i - 2]  for i >= 3: KEYS[i]'s window (ms) and most requests in it
--
-- A buyer's reservation is "<order id>" (reserved), "<order id>:c" (confirmed
-- by the worker) or "<order id>:r" (released: a tombstone, which leaves the
-- user free to buy again; see seckill_release.lua).
--
-- The sale window and the limits are judged on the Redis server clock, so
-- every API instance judges them the same way. All keys share the
-- {<voucher>} hash tag. The limits come first: every attempt on a known
-- voucher counts, whatever it would have been answered.
--
-- Returns {code, wait}: code 0 accepted (stock decremented, buyer recorded
-- with the order id), 1 sold out, 2 already bought, 3 not started, 4 ended,
-- 5 unknown voucher, 6 over a limit (wait: ms until a retry could pass).
local v = redis.call('HMGET', KEYS[1], 'stock', 'begin_ms', 'end_ms')
if not v[1] then
  return {5, 0}
end
local now = now_ms()
if #KEYS > 2 then
  local keys, windows, maxes = {}, {}, {}
  for i = 3, #KEYS do
    keys[i - 2] = KEYS[i]
    windows[i - 2] = tonumber(ARGV[2 * i - 3])
    maxes[i - 2] = tonumber(ARGV[2 * i - 2])
  end
  local wait = window_admit(keys, windows, maxes, ARGV[2], now)
  if wait > 0 then
    return {6, wait}
  end
end
if now < tonumber(v[2]) then
  return {3, 0}
end
if now >= tonumber(v[3]) then
  return {4, 0}
end
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if cur and string.sub(cur, -2) ~= ':r' then
  return {2, 0}
end
if tonumber(v[1]) <= 0 then
  return {1, 0}
end
redis.call('HINCRBY', KEYS[1], 'stock', -1)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return {0, 0}
