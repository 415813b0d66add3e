-- seckill_confirm.lua: the order worker claims a reservation before writing the order.
--
-- KEYS[1]  buyers hash  <prefix>seckill:{<voucher>}:buyers
-- ARGV[1]  user id
-- ARGV[2]  order id
--
-- Marks the buyer's entry "<order id>:c" so that seckill_release.lua can no
-- longer undo it. Confirming twice is harmless (redelivered messages).
--
-- Returns 1 confirmed (now or earlier), 0 revoked (the reservation was
-- released because the publish failed, or belongs to another order).
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':c')
  return 1
end
if cur == ARGV[2] .. ':c' then
  return 1
end
return 0
