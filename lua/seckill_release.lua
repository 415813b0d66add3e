-- seckill_release.lua: undo a reservation whose order never reached the queue.
--
-- KEYS[1]  voucher hash  <prefix>seckill:{<voucher>}:voucher
-- KEYS[2]  buyers hash   <prefix>seckill:{<voucher>}:buyers
-- ARGV[1]  user id
-- ARGV[2]  order id (as reserved, unconfirmed)
--
-- Only the exact unconfirmed order id is released: its entry becomes the
-- tombstone "<order id>:r" (so a message that reaches the worker after all
-- is refused as revoked, and the user may buy again) and one unit of stock
-- comes back. A confirmed order (the worker got the message) or another
-- order is left alone. With no entry at all (Redis lost it) the tombstone is
-- written so a late message is refused, but stock is not touched: whether
-- this unit is still counted is unknown, and the reconciler rebuilds it.
--
-- Returns 1 released, 0 confirmed (the order stands), 2 unknown (no entry),
--         3 another order or an earlier tombstone holds the entry (left alone).
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if cur == ARGV[2] then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':r')
  redis.call('HINCRBY', KEYS[1], 'stock', 1)
  return 1
end
if cur == ARGV[2] .. ':c' then
  return 0
end
if not cur then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':r')
  return 2
end
return 3
