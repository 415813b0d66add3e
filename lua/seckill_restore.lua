-- seckill_restore.lua: account for orders the worker stored although Redis
-- had no entry for them (seckill_confirm.lua answered unknown).
-- generation.lua is prepended.
--
-- KEYS[1]  generation mark (generation.lua)
-- KEYS[2]  voucher hash  <prefix>seckill:{<voucher>}:voucher
-- KEYS[3]  buyers hash   <prefix>seckill:{<voucher>}:buyers
-- ARGV[1]  the caller's generation
-- ARGV[2..] pairs: user id, order id, ... (orders now in MySQL)
--
-- Only on a current voucher (a paused one is rebuilt from MySQL, which
-- counts these orders). For a buyer with no entry, only a tombstone or only
-- the "p" of a walk that went on, the
-- entry becomes "<order id>:c" (the buyer cannot buy twice) and the order
-- takes its unit: stock - 1, so stock + live buyers stays the initial stock
-- and Redis cannot sell that unit again. If stock is already 0, Redis sold
-- the unit to someone else before the order was seen: counted as short.
-- An entry of another live order is left for the reconciler.
--
-- Returns {state, written, short}: state 0 current, 7 paused (nothing
-- written), 8 the caller's generation is stale.
local refused = fenced_out(KEYS[2], 3)
if refused then
  return refused
end
local written, short = 0, 0
for i = 2, #ARGV, 2 do
  local user, order = ARGV[i], ARGV[i + 1]
  local cur = redis.call('HGET', KEYS[3], user)
  if not cur or cur == 'p' or string.sub(cur, -2) == ':r' then
    redis.call('HSET', KEYS[3], user, order .. ':c')
    written = written + 1
    if tonumber(redis.call('HGET', KEYS[2], 'stock')) > 0 then
      redis.call('HINCRBY', KEYS[2], 'stock', -1)
    else
      short = short + 1
    end
  end
end
return {0, written, short}
