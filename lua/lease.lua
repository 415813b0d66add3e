-- lease.lua: renew or give up a lease held under a key, only by its owner.
--
-- KEYS[1]  the lease key (an order-id node lease, a cache rebuild lock)
-- ARGV[1]  owner token of the caller
-- ARGV[2]  new TTL in ms, or 0 to delete the lease
--
-- Returns 1 when the caller held the lease (now renewed or deleted),
--         0 when the key is missing or held by another owner (lease lost).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[2] == '0' then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
