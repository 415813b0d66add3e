-- seckill_release.lua: undo a reservation whose order never reached the queue.
--
-- KEYS[1]  voucher hash  <prefix>seckill:{<voucher>}:voucher
-- KEYS[2]  buyers hash   <prefix>seckill:{<voucher>}:buyers
-- ARGV[1]  user id
-- ARGV[2]  order id (as reserved, unconfirmed)
--
-- Restores one unit of stock and removes the buyer only if the buyer still
-- maps to exactly this unconfirmed order id; a confirmed order (the worker got
-- the message after all) or another order is left alone.
--
-- Returns 1 released, 0 left alone.
if redis.call('HGET', KEYS[2], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HINCRBY', KEYS[1], 'stock', 1)
  return 1
end
return 0
