-- session_read.lua: read a session's Redis copy and renew its TTL, fenced.
-- generation.lua is prepended.
--
-- KEYS[1]  generation mark (generation.lua)
-- KEYS[2]  session copy  <prefix>auth:session:<token sha-256>
-- ARGV[1]  the caller's generation
-- ARGV[2]  TTL in seconds
--
-- Fenced like the seckill scripts so that a copy is never read from a server
-- whose generation was not verified: a Redis that came back from an older
-- snapshot still holds copies of sessions logged out since, stamped with the
-- old generation, which the caller then refuses (core/src/auth).
--
-- Returns {0, copy or false}, or {8} when the caller's generation is stale.
if stale_caller() then
  return {8}
end
local copy = redis.call('GET', KEYS[2])
if copy then
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
return {0, copy}
