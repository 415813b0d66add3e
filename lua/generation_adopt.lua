-- generation_adopt.lua: make a fresh generation current for this server, once.
--
-- KEYS[1]  a slot's generation mark  <prefix>redis:generation:{<tag>}  fields run_id, replid, gen
-- ARGV[1]  the server's run_id (INFO server)
-- ARGV[2]  the server's master_replid (INFO replication)
-- ARGV[3]  a fresh generation token
--
-- Several processes may find at once that the mark does not name this
-- server (a restart, a failover, a restore, a flush); the first one to get
-- here writes its token, and every later one adopts that token instead of
-- its own. See platform/src/kv/generation.rs.
--
-- Returns the generation now current.
local cur = redis.call('HMGET', KEYS[1], 'run_id', 'replid', 'gen')
if cur[1] == ARGV[1] and cur[2] == ARGV[2] and cur[3] then
  return cur[3]
end
redis.call('HSET', KEYS[1], 'run_id', ARGV[1], 'replid', ARGV[2], 'gen', ARGV[3])
return ARGV[3]
