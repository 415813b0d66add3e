-- seckill_revoke.lua: undo a reservation whose order never reached the queue.
-- generation.lua is prepended.
--
-- KEYS[1]  generation mark (generation.lua)
-- KEYS[2]  voucher hash  <prefix>seckill:{<voucher>}:voucher
-- KEYS[3]  buyers hash   <prefix>seckill:{<voucher>}:buyers
-- KEYS[4]  revoked set   <prefix>seckill:{<voucher>}:revoked
-- ARGV[1]  the caller's generation
-- ARGV[2]  user id
-- ARGV[3]  order id (as reserved, unconfirmed)
--
-- Only the exact unconfirmed order id is released: its entry becomes the
-- tombstone "<order id>:r" (so a message that reaches the worker after all
-- is refused as revoked, and the user may buy again) and one unit of stock
-- comes back. A confirmed order (the worker got the message) or another
-- order is left alone. With no entry at all (Redis lost it) the tombstone is
-- written so a late message is refused, but stock is not touched: whether
-- this unit is still counted is unknown, and the reconciler rebuilds it.
-- On a paused voucher the tombstone is written the same way but stock is
-- never touched: the rebuild counts units from MySQL.
-- Unless the order stands (confirmed), its id joins the revoked set: its
-- shopper is told 503, so a late message of it is refused even after the
-- buyer's entry moved on to a later order.
--
-- Returns {code}: 1 released, 0 confirmed (the order stands), 2 unknown (no
-- entry), 3 another order or an earlier tombstone holds the entry (left
-- alone), 8 the caller's generation is stale.
if stale_caller() then
  return {8}
end
local cur = redis.call('HGET', KEYS[3], ARGV[2])
if cur == ARGV[3] .. ':c' then
  return {0}
end
redis.call('SADD', KEYS[4], ARGV[3])
if cur == ARGV[3] then
  redis.call('HSET', KEYS[3], ARGV[2], ARGV[3] .. ':r')
  if current(KEYS[2]) then
    redis.call('HINCRBY', KEYS[2], 'stock', 1)
  end
  return {1}
end
if not cur then
  redis.call('HSET', KEYS[3], ARGV[2], ARGV[3] .. ':r')
  return {2}
end
return {3}
