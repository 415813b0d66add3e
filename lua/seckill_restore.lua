-- seckill_restore.lua: put back the buyer entries of orders the worker stored
-- although Redis had no entry for them (seckill_confirm.lua answered unknown).
--
-- KEYS[1]  buyers hash  <prefix>seckill:{<voucher>}:buyers
-- ARGV     pairs: user id, order id, ... (orders now in MySQL)
--
-- Writes "<order id>:c" for a buyer with no entry or only a tombstone, so the
-- buyer cannot buy the voucher twice; an entry of another live order is left
-- for the reconciler. Stock is not touched (MySQL's is the truth; the
-- reconciler rebuilds Redis stock from it).
--
-- Returns the number of entries written.
local n = 0
for i = 1, #ARGV, 2 do
  local user, order = ARGV[i], ARGV[i + 1]
  local cur = redis.call('HGET', KEYS[1], user)
  if not cur or string.sub(cur, -2) == ':r' then
    redis.call('HSET', KEYS[1], user, order .. ':c')
    n = n + 1
  end
end
return n
