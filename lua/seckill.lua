-- seckill.lua: reserve one unit of a seckill voucher for one user, atomically.
-- generation.lua and ratelimit.lua (window_admit, now_ms) are prepended.
--
-- KEYS[1]  generation mark (generation.lua)
-- KEYS[2]  voucher hash  <prefix>seckill:{<voucher>}:voucher  fields stock, begin_ms, end_ms, gen
-- KEYS[3]  buyers hash   <prefix>seckill:{<voucher>}:buyers   field user id -> reservation
-- KEYS[4..] the shopper's sliding windows, if the route is limited
--           <prefix>seckill:{<voucher>}:limit:<subject>:<value>
-- ARGV[1]  the caller's generation (generation.lua)
-- ARGV[2]  user id
-- ARGV[3]  order id (also the request's member in the windows)
-- ARGV[4]  "1" when the caller walks on to another bucket of the voucher
--          if this one is empty (see core/src/seckill/walk.rs), else "0"
-- ARGV[2i - 3], ARGV[2i - 2]  for i >= 4: KEYS[i]'s window (ms) and most requests in it
--
-- A buyer's reservation is "<order id>" (reserved), "<order id>:c" (confirmed
-- by the worker) or "<order id>:r" (released: a tombstone, which leaves the
-- user free to buy again; see seckill_revoke.lua). "p" marks a buyer who
-- found this bucket empty and walked on: the bucket never sells to them
-- again, even once a release refills it, so they cannot hold a unit here
-- and one further along their walk.
--
-- The sale window and the limits are judged on the Redis server clock, so
-- every API instance judges them the same way. The voucher's keys share the
-- {<voucher>} hash tag. A voucher whose keys were written under another
-- generation is paused: this copy of Redis may be older than the sale
-- (restored, failed over) and is not trusted until rebuilt. The limits come
-- next: every attempt on a live voucher counts, whatever it is answered.
--
-- Returns {code, wait}: code 0 accepted (stock decremented, buyer recorded
-- with the order id), 1 sold out, 2 already bought, 3 not started, 4 ended,
-- 5 unknown voucher (no keys), 6 over a limit (wait: ms until a retry could
-- pass), 7 paused (keys of another generation), 8 the caller's generation
-- is stale, 9 walk on: the bucket is empty (the buyer is now marked "p";
-- wait 0) or the buyer passed it before (wait 1 when it holds stock again,
-- a unit this buyer may not take).
if stale_caller() then
  return {8, 0}
end
local v = redis.call('HMGET', KEYS[2], 'stock', 'begin_ms', 'end_ms', 'gen')
if not v[1] then
  return {5, 0}
end
if v[4] ~= ARGV[1] then
  return {7, 0}
end
local now = now_ms()
if #KEYS > 3 then
  local keys, windows, maxes = {}, {}, {}
  for i = 4, #KEYS do
    keys[i - 3] = KEYS[i]
    windows[i - 3] = tonumber(ARGV[2 * i - 3])
    maxes[i - 3] = tonumber(ARGV[2 * i - 2])
  end
  local wait = window_admit(keys, windows, maxes, ARGV[3], now)
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
local cur = redis.call('HGET', KEYS[3], ARGV[2])
if cur == 'p' then
  return {9, tonumber(v[1]) > 0 and 1 or 0}
end
if cur and string.sub(cur, -2) ~= ':r' then
  return {2, 0}
end
if tonumber(v[1]) <= 0 then
  if ARGV[4] == '1' then
    redis.call('HSET', KEYS[3], ARGV[2], 'p')
    return {9, 0}
  end
  return {1, 0}
end
redis.call('HINCRBY', KEYS[2], 'stock', -1)
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
return {0, 0}
