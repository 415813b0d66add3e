-- id_lease_take.lua: take an order-id node lease, telling how it was left.
-- generation.lua is prepended.
--
-- KEYS[1]  generation mark (generation.lua)
-- KEYS[2]  the node's lease key  <prefix>ids:node:<node>
-- ARGV[1]  the caller's generation
-- ARGV[2]  the caller's owner token
-- ARGV[3]  TTL in ms
--
-- A lease key holds its owner's token while held, and "free:<generation>"
-- once its holder gave it up cleanly (id_lease_free.lua: the holder stopped
-- issuing first). A key that is missing may have vanished under a holder
-- that is still issuing (Redis lost it: restart, failover, eviction), and a
-- "free" mark of another generation may come from a copy of Redis older
-- than a later holder: in both cases the taker must wait out a whole issuing
-- window before issuing (see platform/src/ids.rs).
--
-- Returns {0} taken by someone else, {1} taken, released cleanly (issue at
-- once), {2} taken, wait a window first, {8} the caller's generation is stale.
if stale_caller() then
  return {8}
end
local cur = redis.call('GET', KEYS[2])
if cur and string.sub(cur, 1, 5) ~= 'free:' then
  return {0}
end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
if cur == 'free:' .. ARGV[1] then
  return {1}
end
return {2}
