-- seckill_confirm.lua: the order worker claims reservations before writing the orders.
--
-- KEYS[1]  buyers hash  <prefix>seckill:{<voucher>}:buyers
-- ARGV     pairs: user id, order id, user id, order id, ... (orders of this voucher)
--
-- Marks each buyer's entry "<order id>:c" so that seckill_release.lua can
-- no longer undo it. Confirming twice is harmless (redelivered messages).
--
-- Returns one integer per pair, in order:
--   1 confirmed (now or earlier);
--   0 revoked: the entry is this order's tombstone "<order id>:r" (released
--     because the publish failed: the shopper was told 503);
--   3 superseded: the entry belongs to another order of the buyer;
--   2 unknown: the buyer has no entry at all (Redis lost it: restarted,
--     flushed, evicted or failed over); the caller decides, nothing is written.
local out = {}
for i = 1, #ARGV, 2 do
  local user, order = ARGV[i], ARGV[i + 1]
  local cur = redis.call('HGET', KEYS[1], user)
  if cur == order then
    redis.call('HSET', KEYS[1], user, order .. ':c')
    out[#out + 1] = 1
  elseif cur == order .. ':c' then
    out[#out + 1] = 1
  elseif cur == order .. ':r' then
    out[#out + 1] = 0
  elseif cur then
    out[#out + 1] = 3
  else
    out[#out + 1] = 2
  end
end
return out
