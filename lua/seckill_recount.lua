-- seckill_recount.lua: make a voucher's Redis stock agree with its buyers.
--
-- KEYS[1]  voucher hash  <prefix>seckill:{<voucher>}:voucher
-- KEYS[2]  buyers hash   <prefix>seckill:{<voucher>}:buyers
-- ARGV[1]  initial stock
--
-- Every reservation decrements stock and records its buyer in one script, so
-- stock + live buyers (entries that are not "<id>:r" tombstones) is the
-- initial stock. This recomputes stock from the buyers atomically, so a
-- reservation running at the same time cannot slip between count and write.
--
-- Returns {stock before, stock after}, or {-1, -1} if the voucher hash is gone.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {-1, -1}
end
local live = 0
local entries = redis.call('HVALS', KEYS[2])
for i = 1, #entries do
  if string.sub(entries[i], -2) ~= ':r' then
    live = live + 1
  end
end
local before = tonumber(redis.call('HGET', KEYS[1], 'stock'))
local after = tonumber(ARGV[1]) - live
if after < 0 then
  after = 0
end
redis.call('HSET', KEYS[1], 'stock', after)
return {before, after}
