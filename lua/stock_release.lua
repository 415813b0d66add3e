-- stock_release.lua: give a closed order's unit back and free its buyer slot,
-- once per release event.
--
-- KEYS[1]  voucher hash   <prefix>seckill:{<voucher>}:voucher
-- KEYS[2]  buyers hash    <prefix>seckill:{<voucher>}:buyers
-- KEYS[3]  released set   <prefix>seckill:{<voucher>}:released  (event ids applied)
-- ARGV[1]  event id (the outbox row id; the reconciler's repairs use their own)
-- ARGV[2]  user id
-- ARGV[3]  order id
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
-- Returns 1 released, 0 duplicate event, 2 the buyer had no entry (Redis lost
-- it: a tombstone is written, stock untouched: the reconciler recounts it),
-- 3 the voucher's keys are gone (the reconciler rebuilds them from MySQL,
-- which counts this release), 4 the entry holds another order (untouched).
if redis.call('SADD', KEYS[3], ARGV[1]) == 0 then
  return 0
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 3
end
local cur = redis.call('HGET', KEYS[2], ARGV[2])
if cur == ARGV[3] or cur == ARGV[3] .. ':c' then
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3] .. ':r')
  redis.call('HINCRBY', KEYS[1], 'stock', 1)
  return 1
end
if not cur then
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3] .. ':r')
  return 2
end
return 4
