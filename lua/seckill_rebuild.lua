-- seckill_rebuild.lua: end a voucher's pause with sale state built from
-- MySQL, once. generation.lua is prepended.
--
-- KEYS[1]  generation mark (generation.lua)
-- KEYS[2]  voucher hash  <prefix>seckill:{<voucher>}:voucher
-- KEYS[3]  buyers hash   <prefix>seckill:{<voucher>}:buyers
-- KEYS[4]  staged buyers <prefix>seckill:{<voucher>}:staged:<token>, written
--          by the caller just before (absent when there is no live order)
-- ARGV[1]  the caller's generation
-- ARGV[2]  stock (initial - live orders)
-- ARGV[3]  begin_ms
-- ARGV[4]  end_ms
-- ARGV[5]  pay_value
--
-- The caller read MySQL only after every order message published before the
-- pause was applied (see core/src/reconcile). If the voucher is already
-- current, another rebuild got here first and reservations may have been
-- made on it since: the staged copy is dropped and nothing changes, so two
-- rebuilds racing cannot wipe what the first one's sale accepted.
--
-- Returns {code}: 1 rebuilt, 0 already current (nothing changed), 8 the
-- caller's generation is stale.
if stale_caller() then
  redis.call('DEL', KEYS[4])
  return {8}
end
if current(KEYS[2]) then
  redis.call('DEL', KEYS[4])
  return {0}
end
redis.call('DEL', KEYS[3], KEYS[2])
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('RENAME', KEYS[4], KEYS[3])
end
redis.call('HSET', KEYS[2], 'stock', ARGV[2], 'begin_ms', ARGV[3], 'end_ms', ARGV[4],
  'pay_value', ARGV[5], 'gen', ARGV[1])
return {1}
