-- seckill_recount.lua: make a voucher's Redis stock agree with its buyers.
-- generation.lua is prepended.
--
-- KEYS[1]  generation mark (generation.lua)
-- KEYS[2]  voucher hash  <prefix>seckill:{<voucher>}:voucher
-- KEYS[3]  buyers hash   <prefix>seckill:{<voucher>}:buyers
-- ARGV[1]  the caller's generation
-- ARGV[2]  initial stock (of this bucket)
--
-- Every reservation decrements stock and records its buyer in one script, so
-- stock + live buyers (entries that are neither "<id>:r" tombstones nor the
-- "p" of a buyer who walked on) is the initial stock. This recomputes stock
-- from the buyers atomically, so a reservation running at the same time
-- cannot slip between count and write.
--
-- Returns {state, stock before, stock after}: state 0 recounted, 7 paused
-- (keys gone or of another generation: untouched), 8 the caller's
-- generation is stale.
local refused = fenced_out(KEYS[2], 3)
if refused then
  return refused
end
local live = 0
local entries = redis.call('HVALS', KEYS[3])
for i = 1, #entries do
  if entries[i] ~= 'p' and string.sub(entries[i], -2) ~= ':r' then
    live = live + 1
  end
end
local before = tonumber(redis.call('HGET', KEYS[2], 'stock'))
local after = tonumber(ARGV[2]) - live
if after < 0 then
  after = 0
end
redis.call('HSET', KEYS[2], 'stock', after)
return {0, before, after}
