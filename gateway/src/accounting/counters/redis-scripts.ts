/*
 * Lua scripts of the Redis counters. Each runs atomically on the Redis server, so several gateway nodes share one state.
 * Money is integer units of 1e-10 USD (see units.ts); numbers go back to Redis through string.format('%d') because
 * Lua numbers are doubles and their default string form would turn large integers into exponent notation.
 */

/**
 * KEYS: epoch, record, then (spend hash, holds zset) per window, in the order they are checked: the agent's day and
 * month, optionally the trace, optionally the tenant's day and month (one pool for all its agents).
 * ARGV: now ms, amount, hold member, hold deadline ms, record TTL ms, epoch TTL ms, the trace limit of a request without
 *       trace keys ('' = none), then per window: its name, its limit ('' = none), its key TTL ms.
 * Every window is checked before any is held, in one script: concurrent requests of any agent on any node cannot pass
 * a limit together.
 * Returns {1, epoch}, {0, name, used}, or {-1} when the epoch key is missing: this Redis lost the spend it was seeded
 * with (restarted without persistence, flushed), so nothing is admitted until the counters are rebuilt.
 */
export const RESERVE = `
local epoch = redis.call('GET', KEYS[1])
if not epoch then return { -1 } end
local now = tonumber(ARGV[1])
local amount = tonumber(ARGV[2])
local scopes = (#KEYS - 2) / 2

for i = 1, scopes do
  local h, z = KEYS[2 * i + 1], KEYS[2 * i + 2]
  local name, limit = ARGV[3 * i + 5], ARGV[3 * i + 6]
  -- Holds past their deadline (a crashed node's) stop counting.
  local stale = redis.call('ZRANGEBYSCORE', z, '-inf', now, 'LIMIT', 0, 500)
  if #stale > 0 then
    local total = 0
    for _, m in ipairs(stale) do total = total + tonumber(string.match(m, ':(%d+)$')) end
    redis.call('ZREM', z, unpack(stale))
    redis.call('HINCRBY', h, 'reserved', string.format('%d', -total))
  end
  if limit ~= '' then
    local v = redis.call('HMGET', h, 'spent', 'reserved')
    local used = (tonumber(v[1]) or 0) + (tonumber(v[2]) or 0)
    if used + amount > tonumber(limit) then
      return { 0, name, string.format('%d', used) }
    end
  end
  -- Without trace keys the request is a trace of one: its limit applies to this request alone, after the agent's month.
  if name == 'monthly' and ARGV[7] ~= '' and amount > tonumber(ARGV[7]) then
    return { 0, 'trace', '0' }
  end
end

for i = 1, scopes do
  local h, z = KEYS[2 * i + 1], KEYS[2 * i + 2]
  redis.call('HINCRBY', h, 'reserved', ARGV[2])
  redis.call('ZADD', z, ARGV[4], ARGV[3])
  redis.call('PEXPIRE', h, ARGV[3 * i + 7])
  redis.call('PEXPIRE', z, ARGV[3 * i + 7])
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return { 1, epoch }
`;

/**
 * Settle (actual > 0) or release (actual = 0). KEYS as RESERVE (epoch, record, windows).
 * ARGV: hold member, reserved amount, actual amount, the epoch the reservation was made under, the time the settle
 * started (ms), then a key TTL ms per window.
 * Returns 1; 0 when the reservation was already settled or released; 2 when its record went with an earlier Redis state
 * (see below) and the cost was added without a hold (its record is then 'lost', so a second settle does nothing);
 * -1 when the epoch is missing (the counters await a rebuild).
 */
export const FINISH = `
local scopes = (#KEYS - 2) / 2
local record = redis.call('GET', KEYS[2])
if record == 'lost' then return 0 end
if not record then
  local epoch = redis.call('GET', KEYS[1])
  if not epoch then return -1 end
  if ARGV[3] == '0' or ARGV[4] == '' or epoch == ARGV[4] then return 0 end
  -- Reserved under an earlier epoch: the hold went with the state Redis lost. A cost settled after the rebuild had read
  -- the usage rows is not among them (its row is written after this call starts), so it is added here, once.
  local readEnd = tonumber(string.match(epoch, '|(%d+)$')) or 0
  if tonumber(ARGV[5]) <= readEnd then return 0 end
  for i = 1, scopes do
    local h = KEYS[2 * i + 1]
    redis.call('HINCRBY', h, 'spent', ARGV[3])
    redis.call('PEXPIRE', h, ARGV[5 + i])
  end
  redis.call('SET', KEYS[2], 'lost', 'PX', ARGV[6])
  return 2
end
redis.call('DEL', KEYS[2])
for i = 1, scopes do
  local h, z = KEYS[2 * i + 1], KEYS[2 * i + 2]
  -- An expired hold was already taken off 'reserved' by the sweep in RESERVE.
  if redis.call('ZREM', z, ARGV[1]) == 1 and ARGV[2] ~= '0' then
    redis.call('HINCRBY', h, 'reserved', '-' .. ARGV[2])
  end
  if ARGV[3] ~= '0' then
    redis.call('HINCRBY', h, 'spent', ARGV[3])
    redis.call('PEXPIRE', h, ARGV[5 + i])
  end
end
return 1
`;

/**
 * Records the cost of a request no limit applied to (it reserved nothing). KEYS: epoch, then the spend hash of each
 * window (the agent's day and month, optionally the trace, optionally the tenant's day and month).
 * ARGV: cost, the settle start ms, then a TTL ms per spend hash.
 * Returns 1; 0 when a rebuild read the usage rows after this settle started (the rows may hold it); -1 when the epoch is
 * missing.
 */
export const ADD_SPEND = `
local epoch = redis.call('GET', KEYS[1])
if not epoch then return -1 end
local readEnd = tonumber(string.match(epoch, '|(%d+)$')) or 0
if tonumber(ARGV[2]) <= readEnd then return 0 end
for i = 2, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'spent', ARGV[1])
  redis.call('PEXPIRE', KEYS[i], ARGV[1 + i])
end
return 1
`;

/** KEYS: epoch, day hash, month hash (an agent's or a tenant's). Returns {day spent, month spent, 1 when the epoch is there, else 0}. */
export const SPEND = `
local seeded = redis.call('EXISTS', KEYS[1])
return { redis.call('HGET', KEYS[2], 'spent') or '0', redis.call('HGET', KEYS[3], 'spent') or '0', seeded }
`;

/**
 * Sliding-window rate limit (formula of sliding-window.ts). KEYS: this minute's hash, the previous minute's hash.
 * ARGV: rpm, tpm ('' = none), tokens, ms elapsed in this minute, key TTL ms.
 * Returns {1} or {0, which, prev requests, cur requests, prev tokens, cur tokens}.
 */
export const RATE_LIMIT = `
local e = tonumber(ARGV[4])
local c = redis.call('HMGET', KEYS[1], 'r', 't')
local p = redis.call('HMGET', KEYS[2], 'r', 't')
local cr, ct = tonumber(c[1]) or 0, tonumber(c[2]) or 0
local pr, pt = tonumber(p[1]) or 0, tonumber(p[2]) or 0
local tokens = tonumber(ARGV[3])
local which = nil
if ARGV[1] ~= '' and pr * (1 - e / 60000) + cr + 1 > tonumber(ARGV[1]) then
  which = 'rpm'
elseif ARGV[2] ~= '' and pt * (1 - e / 60000) + ct + tokens > tonumber(ARGV[2]) then
  which = 'tpm'
end
if which then
  return { 0, which, string.format('%d', pr), string.format('%d', cr), string.format('%d', pt), string.format('%d', ct) }
end
redis.call('HINCRBY', KEYS[1], 'r', 1)
redis.call('HINCRBY', KEYS[1], 't', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return { 1 }
`;

/** KEYS: this minute's hash. ARGV: token delta (may be negative), key TTL ms. Never goes below zero. */
export const ADD_TOKENS = `
local t = (tonumber(redis.call('HGET', KEYS[1], 't')) or 0) + tonumber(ARGV[1])
if t < 0 then t = 0 end
redis.call('HSET', KEYS[1], 't', string.format('%d', t))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** KEYS: the sightings zset. ARGV: now ms, window ms, unique member, most sightings kept. Returns the count in the window. */
export const COUNT_REPEAT = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - tonumber(ARGV[2])))
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
local n = redis.call('ZCARD', KEYS[1])
local cap = tonumber(ARGV[4])
if n > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - cap - 1)
  n = cap
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return n
`;

/**
 * KEYS: a spend hash. ARGV: spent units, TTL ms, mode. 'fill' fills the window only when Redis has no spend for it (a
 * node starting beside a Redis that kept its state: other nodes may have counted newer spend). 'max' raises it to the
 * seeded spend (a rebuild: the usage rows and Redis each hold a part of what was spent, neither more than all of it, so
 * the larger is the best lower bound; running it twice, or on two nodes at once, changes nothing).
 */
export const SEED = `
local cur = redis.call('HGET', KEYS[1], 'spent')
if not cur then
  redis.call('HSET', KEYS[1], 'spent', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
elseif ARGV[3] == 'max' and tonumber(ARGV[1]) > tonumber(cur) then
  redis.call('HSET', KEYS[1], 'spent', ARGV[1])
end
return 1
`;

/**
 * Ends a rebuild. KEYS: epoch, the rebuild's marker. ARGV: the new epoch ('<id>|<ms the usage rows were read by>'), its TTL ms.
 * Returns 1 when it set the epoch, 2 when another node's rebuild set it first, 0 when the marker is gone: Redis lost its
 * state again during the rebuild, which must start over.
 */
export const COMMIT_EPOCH = `
if redis.call('DEL', KEYS[2]) == 0 then return 0 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 2
`;
