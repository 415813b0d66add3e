-- stock_release.lua: give a closed order's unit back and free its buyer slot,
-- once per release event. generation.lua is prepended.
--
-- KEYS[1]  generation mark (generation.lua)
-- KEYS[2]  voucher hash   <prefix>seckill:{<voucher>}:voucher
-- KEYS[3]  buyers hash    <prefix>seckill:{<voucher>}:buyers
-- KEYS[4]  released set   <prefix>seckill:{<voucher>}:released  (event ids applied)
-- ARGV[1]  the caller's generation
-- ARGV[2]  event id (the outbox row id; the reconciler's repairs use their own)
-- ARGV[3]  user id
-- ARGV[4]  order id
--
-- MySQL already closed the order and gave its unit back (stock + 1) in the
-- transaction that wrote the event; this is the Redis half. The buyer's
-- entry becomes the tombstone "<order id>:r" (the buyer may buy again, and a
-- late message of the order is refused) and stock goes up by one, only if
-- the entry still holds this order (reserved or confirmed). An event id seen
-- before changes nothing, so a redelivered event cannot give a unit twice;
-- the entry check alone also refuses a second release of the same order
-- under another event id.
--
-- Returns {code}: 1 released, 0 duplicate event, 2 the buyer had no entry
-- (a tombstone is written, stock untouched: the reconciler recounts it),
-- 3 the voucher is paused (keys gone or of another generation: nothing is
-- written; the rebuild from MySQL counts this release), 4 the entry holds
-- another order (untouched), 8 the caller's generation is stale.
if stale_caller() then
  return {8}
end
if not current(KEYS[2]) then
  return {3}
end
if redis.call('SADD', KEYS[4], ARGV[2]) == 0 then
  return {0}
end
local cur = redis.call('HGET', KEYS[3], ARGV[3])
if cur == ARGV[4] or cur == ARGV[4] .. ':c' then
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[4] .. ':r')
  redis.call('HINCRBY', KEYS[2], 'stock', 1)
  return {1}
end
if not cur then
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[4] .. ':r')
  return {2}
end
return {4}
