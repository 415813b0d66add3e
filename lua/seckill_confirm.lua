-- seckill_confirm.lua: the order worker claims reservations before writing the orders.
-- generation.lua is prepended.
--
-- KEYS[1]  generation mark (generation.lua)
-- KEYS[2]  voucher hash  <prefix>seckill:{<voucher>}:voucher
-- KEYS[3]  buyers hash   <prefix>seckill:{<voucher>}:buyers
-- KEYS[4]  revoked set   <prefix>seckill:{<voucher>}:revoked (seckill_revoke.lua)
-- ARGV[1]  the caller's generation
-- ARGV[2..] pairs: user id, order id, ... (orders of this voucher)
--
-- Returns {state, answer per pair...}.
-- state 0, the voucher is current: each buyer's entry "<order id>" becomes
-- "<order id>:c", so seckill_revoke.lua can no longer undo it (confirming
-- twice is harmless). Answers:
--   1 confirmed (now or earlier);
--   0 revoked: the entry is this order's tombstone "<order id>:r", or the
--     order is in the revoked set (released because the publish failed: the
--     shopper was told 503, and may have bought again since);
--   3 superseded: the entry belongs to another order of the buyer;
--   0 also when the entry is "p" (the buyer found this bucket empty and
--     walked on): the order's own bucket marks its buyer passed only after
--     the order was released there, so this is a late copy of a dead order;
--   2 unknown: the buyer has no entry at all; the caller decides.
-- state 7, the voucher is paused (its keys are gone or of another
-- generation): nothing is written and entries are not trusted, except a
-- tombstone of this very order or its id in the revoked set, which only a
-- release writes (0 revoked);
-- every other order answers 4: MySQL's guards decide, and the rebuild that
-- ends the pause counts it.
-- state 8: the caller's generation is stale.
if stale_caller() then
  return {8}
end
local paused = not current(KEYS[2])
local out = {paused and 7 or 0}
for i = 2, #ARGV, 2 do
  local user, order = ARGV[i], ARGV[i + 1]
  local cur = redis.call('HGET', KEYS[3], user)
  local mine = cur == order or cur == order .. ':c'
  local dead = cur == order .. ':r' or (cur == 'p' and not paused)
  if dead or (not mine and redis.call('SISMEMBER', KEYS[4], order) == 1) then
    out[#out + 1] = 0
  elseif paused then
    out[#out + 1] = 4
  elseif cur == order then
    redis.call('HSET', KEYS[3], user, order .. ':c')
    out[#out + 1] = 1
  elseif cur == order .. ':c' then
    out[#out + 1] = 1
  elseif cur then
    out[#out + 1] = 3
  else
    out[#out + 1] = 2
  end
end
return out
