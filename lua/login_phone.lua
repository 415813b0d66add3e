-- login_phone.lua: one login step against one phone, from one client: a
-- code request, a login attempt, or a look at the locks. Every key is the
-- phone's (one hash tag); the client-wide counts are login_client.lua's.
--
-- KEYS[1]  the phone's code            <prefix>auth:{<phone>}:code
-- KEYS[2]  the client's wrong tries    <prefix>auth:{<phone>}:code:tries:<client>
-- KEYS[3]  lock of (phone, client)     <prefix>auth:{<phone>}:lock:<client>
-- KEYS[4]  lock of the phone           <prefix>auth:{<phone>}:lock
-- KEYS[5]  strikes of (phone, client)  <prefix>auth:{<phone>}:<kind>:<client>
-- KEYS[6]  clients with strikes        <prefix>auth:{<phone>}:<kind>:clients
-- ARGV[1]  'check', 'code' (store ARGV[2] as the new code) or 'login'
--          (ARGV[2] is the code given)
-- ARGV[2]  the code
-- ARGV[3]  the client (an IPv4 address or an IPv6 /64)
-- ARGV[4]  most strikes of (phone, client) within the window
-- ARGV[5]  distinct clients with strikes that lock the whole phone
-- ARGV[6]  window, ms (a count lives this long from its first strike)
-- ARGV[7]  lockout, ms
-- ARGV[8]  wrong tries a code allows one client before it is spent for it
-- ARGV[9]  code lifetime, ms
--
-- A strike counts against the pair (phone, client), which locks after
-- ARGV[4]; a pair that locks is evidence against the phone, and the phone
-- as a whole is locked only when ARGV[5] distinct clients were locked out
-- of it within the window, so one client (one attacker) cannot lock a phone
-- for everyone. Code requests strike ('code' mode); a request while a code
-- is valid sends the same code again (another client's request cannot
-- replace the owner's code). Wrong codes strike only when a code exists (a
-- guess at a phone with no code costs its owner nothing); each client has
-- ARGV[8] tries at a code, so an attacker's guesses do not spend it for
-- the owner.
--
-- Returns {status, ms, code}: status 'locked' (ms: the lockout left),
-- 'sent' (code: the code to send), 'ok' (the code matched and is spent),
-- 'wrong', 'none' (no code), or 'open' (check mode, no lock).
local function locked()
  local m = math.max(redis.call('PTTL', KEYS[3]), redis.call('PTTL', KEYS[4]))
  if m > 0 then return m end
  return 0
end

-- Counts one strike against the pair; answers the lockout it set, or 0.
local function strike()
  local n = redis.call('INCR', KEYS[5])
  if n == 1 then redis.call('PEXPIRE', KEYS[5], ARGV[6]) end
  if n <= tonumber(ARGV[4]) then return 0 end
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[7])
  redis.call('DEL', KEYS[5])
  -- The pair's lock is evidence against the phone.
  redis.call('SADD', KEYS[6], ARGV[3])
  if redis.call('PTTL', KEYS[6]) < 0 then redis.call('PEXPIRE', KEYS[6], ARGV[6]) end
  if redis.call('SCARD', KEYS[6]) >= tonumber(ARGV[5]) then
    redis.call('SET', KEYS[4], '1', 'PX', ARGV[7])
    redis.call('DEL', KEYS[6])
  end
  return tonumber(ARGV[7])
end

local left = locked()
if left > 0 then return {'locked', left, ''} end
local mode = ARGV[1]
if mode == 'check' then return {'open', 0, ''} end

if mode == 'code' then
  local lockout = strike()
  if lockout > 0 then return {'locked', lockout, ''} end
  local code = redis.call('GET', KEYS[1])
  if not code then
    code = ARGV[2]
    redis.call('SET', KEYS[1], code, 'PX', ARGV[9])
  end
  return {'sent', 0, code}
end

-- login
local code = redis.call('GET', KEYS[1])
if not code then return {'none', 0, ''} end
local tries = tonumber(redis.call('GET', KEYS[2]) or '0')
if tries < tonumber(ARGV[8]) and code == ARGV[2] then
  redis.call('DEL', KEYS[1], KEYS[2])
  return {'ok', 0, ''}
end
if tries < tonumber(ARGV[8]) then
  redis.call('INCR', KEYS[2])
  redis.call('PEXPIRE', KEYS[2], math.max(redis.call('PTTL', KEYS[1]), 1))
end
local lockout = strike()
if lockout > 0 then return {'locked', lockout, ''} end
return {'wrong', 0, ''}
