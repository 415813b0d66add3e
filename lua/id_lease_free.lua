-- id_lease_free.lua: give up an order-id node lease cleanly.
-- generation.lua is prepended.
--
-- KEYS[1]  generation mark (generation.lua)
-- KEYS[2]  the node's lease key  <prefix>ids:node:<node>
-- ARGV[1]  the caller's generation
-- ARGV[2]  the caller's owner token
-- ARGV[3]  TTL in ms of the "free" mark
--
-- The caller stopped issuing before this call. If it still holds the lease,
-- the key becomes "free:<generation>", so the next taker may issue at once
-- (id_lease_take.lua); once the mark expires a taker waits a window.
--
-- Returns {1} freed, {0} not held by the caller, {8} the caller's
-- generation is stale.
if stale_caller() then
  return {8}
end
if redis.call('GET', KEYS[2]) ~= ARGV[2] then
  return {0}
end
redis.call('SET', KEYS[2], 'free:' .. ARGV[1], 'PX', ARGV[3])
return {1}
