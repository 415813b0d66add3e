-- generation.lua: prepended to every fenced script (see platform/src/kv/generation.rs).
--
-- A fenced script's KEYS[1] is the generation mark of its slot, <prefix>redis:generation:{<tag>}
-- and its ARGV[1] the generation its caller verified. The script's own keys
-- and arguments follow.

-- True when the caller's generation is not this server's: the caller must
-- verify again before anything is decided (the script answers 8).
local function stale_caller()
  return redis.call('HGET', KEYS[1], 'gen') ~= ARGV[1]
end

-- True when the sale state in voucher hash `key` was written under the
-- current generation (its `gen` field); false when it is gone or older:
-- Redis may hold a copy from before its last restart, failover or restore.
local function current(key)
  return redis.call('HGET', key, 'gen') == ARGV[1]
end

-- The answer of a script that acts only on current sale state: {8, 0, ...}
-- when the caller's generation is stale, {7, 0, ...} when the state in
-- voucher hash `key` is not current, nil to go on; `width` integers in all.
local function fenced_out(key, width)
  local code = (stale_caller() and 8) or (not current(key) and 7) or nil
  if not code then
    return nil
  end
  local out = {code}
  for i = 2, width do
    out[i] = 0
  end
  return out
end
