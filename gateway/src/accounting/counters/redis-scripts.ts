/*
 * Lua scripts of the Redis counters. Each runs atomically on the Redis server, so several gateway nodes share one state.
 * Money is integer units of 1e-10 USD (see units.ts); numbers go back to Redis through string.format('%d') because
 * Lua numbers are doubles and their default string form would turn large integers into exponent notation.
 */
import type { Redis } from 'ioredis';

type Arg = string | number;

/** The scripts as client commands, registered with defineCommand so each call is one EVALSHA (EVAL once per script). */
export interface ScriptCommands {
  agwReserve(numKeys: number, ...args: Arg[]): Promise<[number, string?, string?]>;
  agwFinish(numKeys: number, ...args: Arg[]): Promise<number>;
  agwAddSpend(numKeys: number, ...args: Arg[]): Promise<number>;
  agwReassert(numKeys: number, ...args: Arg[]): Promise<number>;
  agwMark(numKeys: number, ...args: Arg[]): Promise<number>;
  agwSpend(epochKey: string, dayKey: string, monthKey: string): Promise<[string, string, number]>;
  agwRateLimit(cur: string, prev: string, ...args: Arg[]): Promise<[number, ('rpm' | 'tpm')?, ...string[]]>;
  agwAddTokens(cur: string, ...args: Arg[]): Promise<number>;
  agwCountRepeat(key: string, ...args: Arg[]): Promise<number>;
  agwSeed(key: string, ...args: Arg[]): Promise<number>;
  agwGate(epochKey: string, waitingKey: string, ...args: Arg[]): Promise<number>;
  agwState(epochKey: string, waitingKey: string, self: string): Promise<[string | null, number, number]>;
  agwAck(epochKey: string, waitingKey: string, ...args: Arg[]): Promise<number>;
  agwSeeded(epochKey: string, waitingKey: string, marker: string, ...args: Arg[]): Promise<number>;
}

export type ScriptedRedis = Redis & ScriptCommands;

/** Registers every script on the client. */
export function defineScripts(client: Redis): ScriptedRedis {
  client.defineCommand('agwReserve', { lua: RESERVE });
  client.defineCommand('agwFinish', { lua: FINISH });
  client.defineCommand('agwAddSpend', { lua: ADD_SPEND });
  client.defineCommand('agwReassert', { lua: REASSERT });
  client.defineCommand('agwMark', { lua: MARK });
  client.defineCommand('agwSpend', { lua: SPEND, numberOfKeys: 3 });
  client.defineCommand('agwRateLimit', { lua: RATE_LIMIT, numberOfKeys: 2 });
  client.defineCommand('agwAddTokens', { lua: ADD_TOKENS, numberOfKeys: 1 });
  client.defineCommand('agwCountRepeat', { lua: COUNT_REPEAT, numberOfKeys: 1 });
  client.defineCommand('agwSeed', { lua: SEED, numberOfKeys: 1 });
  client.defineCommand('agwGate', { lua: GATE, numberOfKeys: 2 });
  client.defineCommand('agwState', { lua: STATE, numberOfKeys: 2 });
  client.defineCommand('agwAck', { lua: ACK, numberOfKeys: 2 });
  client.defineCommand('agwSeeded', { lua: SEEDED, numberOfKeys: 3 });
  return client as ScriptedRedis;
}

/**
 * KEYS: epoch, record, then (spend hash, holds zset) per window, in the order they are checked: the agent's day and
 * month, optionally the trace, optionally the tenant's day and month (one pool for all its agents).
 * ARGV: now ms, amount, hold member, hold deadline ms, record TTL ms, epoch TTL ms, the trace limit of a request without
 *       trace keys ('' = none), then per window: its name, its limit ('' = none), its key TTL ms.
 * Every window is checked before any is held, in one script: concurrent requests of any agent on any node cannot pass
 * a limit together.
 * Returns {1, epoch id}, {0, name, used}, {-1} when the epoch key is missing (this Redis lost the spend it was seeded
 * with: restarted without persistence, flushed), or {-2} while the new epoch waits for the nodes to re-assert their
 * holds and for its seed (see GATE): nothing is admitted until then.
 */
export const RESERVE = `
local epoch = redis.call('GET', KEYS[1])
if not epoch then return { -1 } end
local id, seeded = string.match(epoch, '^([^|]*)|(%d+)')
if seeded == '0' then return { -2 } end
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
return { 1, id or epoch }
`;

/**
 * Settle (actual > 0) or release (actual = 0). KEYS as RESERVE (epoch, record, windows).
 * ARGV: hold member, reserved amount, actual amount, the epoch id the hold was last asserted under, then a key TTL ms per
 * window.
 * Returns 1; 0 when the reservation was already settled or released; 2 when its record went with an earlier Redis state
 * and the cost was added without a hold (its record is then 'lost', so a second settle does nothing); -1 while there is
 * no seeded epoch (the counters are being rebuilt: settle once they are).
 */
export const FINISH = `
local scopes = (#KEYS - 2) / 2
local epoch = redis.call('GET', KEYS[1])
local id, seeded = nil, nil
if epoch then id, seeded = string.match(epoch, '^([^|]*)|(%d+)') end
local record = redis.call('GET', KEYS[2])
if record == 'lost' then return 0 end
if not record then
  if not epoch or seeded == '0' then return -1 end
  if ARGV[3] == '0' or (id or epoch) == ARGV[4] then return 0 end
  -- Asserted under an earlier epoch and never re-asserted (the node was not waited for, or stopped and its journal is
  -- replayed now): the rebuild did not read this cost (its usage row was not in the database yet), so it is added, once.
  for i = 1, scopes do
    local h = KEYS[2 * i + 1]
    redis.call('HINCRBY', h, 'spent', ARGV[3])
    redis.call('PEXPIRE', h, ARGV[4 + i])
  end
  redis.call('SET', KEYS[2], 'lost', 'PX', ARGV[5])
  return 2
end
-- A hold put back after a loss is settled by a ticket of the earlier epoch: its record stays, as 'lost', so that a
-- second settle of that ticket finds it done instead of counting it as never put back.
if record == 'r' then redis.call('SET', KEYS[2], 'lost', 'PX', ARGV[5]) else redis.call('DEL', KEYS[2]) end
for i = 1, scopes do
  local h, z = KEYS[2 * i + 1], KEYS[2 * i + 2]
  -- An expired hold was already taken off 'reserved' by the sweep in RESERVE.
  if redis.call('ZREM', z, ARGV[1]) == 1 and ARGV[2] ~= '0' then
    redis.call('HINCRBY', h, 'reserved', '-' .. ARGV[2])
  end
  if ARGV[3] ~= '0' then
    redis.call('HINCRBY', h, 'spent', ARGV[3])
    redis.call('PEXPIRE', h, ARGV[4 + i])
  end
end
return 1
`;

/**
 * Records the cost of a request no limit applied to (it reserved nothing). KEYS: epoch, its marker (res:<nonce>), then
 * the spend hash of each window (the agent's day and month, optionally the trace, optionally the tenant's day and month).
 * ARGV: cost, marker TTL ms ('' = no marker: the cost is added every time), then a TTL ms per spend hash.
 * The marker makes the addition idempotent while the usage journal holds the request's row (a retry after a timeout, a
 * replay after a crash). Returns 1; 0 when the marker says it was added; -1 while there is no seeded epoch.
 */
export const ADD_SPEND = `
local epoch = redis.call('GET', KEYS[1])
if not epoch then return -1 end
if string.match(epoch, '^[^|]*|(%d+)') == '0' then return -1 end
if ARGV[2] ~= '' and redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
for i = 3, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'spent', ARGV[1])
  redis.call('PEXPIRE', KEYS[i], ARGV[i])
end
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], 'done', 'PX', ARGV[2]) end
return 1
`;

/**
 * Puts a hold this node made back after Redis lost it. KEYS as RESERVE (epoch, record, windows).
 * ARGV: the epoch id to assert under, hold member, amount, hold deadline ms, record TTL ms, then a key TTL ms per window.
 * The hold counts whatever the limits say: its request was admitted and is running.
 * Returns 1; 0 when the record is there (the hold is, or it was settled meanwhile); -1 when the epoch is another one.
 */
export const REASSERT = `
local epoch = redis.call('GET', KEYS[1])
if not epoch or string.match(epoch, '^([^|]*)|') ~= ARGV[1] then return -1 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
for i = 1, (#KEYS - 2) / 2 do
  local h, z = KEYS[2 * i + 1], KEYS[2 * i + 2]
  redis.call('HINCRBY', h, 'reserved', ARGV[3])
  redis.call('ZADD', z, ARGV[4], ARGV[2])
  redis.call('PEXPIRE', h, ARGV[5 + i])
  redis.call('PEXPIRE', z, ARGV[5 + i])
end
redis.call('SET', KEYS[2], 'r', 'PX', ARGV[5])
return 1
`;

/**
 * Records whose reservations are counted another way (their usage rows were in the database when the counters were
 * rebuilt): a settle or a replay of them does nothing. KEYS: the records. ARGV: TTL ms.
 */
export const MARK = `
for i = 1, #KEYS do redis.call('SET', KEYS[i], 'lost', 'PX', ARGV[1]) end
return #KEYS
`;

/** KEYS: epoch, day hash, month hash (an agent's or a tenant's). Returns {day spent, month spent, 1 when a seeded epoch is there, else 0}. */
export const SPEND = `
local epoch = redis.call('GET', KEYS[1])
local seeded = 0
if epoch and string.match(epoch, '^[^|]*|(%d+)') ~= '0' then seeded = 1 end
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
 * Starts a new epoch after Redis lost its state: gated ('<id>|0') until every node in `waiting` has re-asserted its holds
 * and written its usage rows, and the spend is seeded from them (SEEDED). KEYS: epoch, waiting set.
 * ARGV: the epoch value, its TTL ms, then the ids of the nodes to wait for.
 * Returns 1 when it set the epoch, 0 when another node set one first.
 */
export const GATE = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
redis.call('DEL', KEYS[2])
for i = 3, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
return 1
`;

/**
 * What a node needs to know each time it looks. KEYS: epoch, waiting set. ARGV: this node's id.
 * Returns {epoch or false, nodes still waited for, 1 when this node is one of them}.
 */
export const STATE = `
return { redis.call('GET', KEYS[1]), redis.call('SCARD', KEYS[2]), redis.call('SISMEMBER', KEYS[2], ARGV[1]) }
`;

/**
 * Nodes that have re-asserted (or are gone) stop being waited for. KEYS: epoch, waiting set. ARGV: the epoch id, node ids.
 * Returns the nodes still waited for, or -1 when the epoch is another one.
 */
export const ACK = `
local epoch = redis.call('GET', KEYS[1])
if not epoch or string.match(epoch, '^([^|]*)|') ~= ARGV[1] then return -1 end
for i = 2, #ARGV do redis.call('SREM', KEYS[2], ARGV[i]) end
return redis.call('SCARD', KEYS[2])
`;

/**
 * Opens a gated epoch once its spend is seeded. KEYS: epoch, waiting set, the seeding node's marker.
 * ARGV: the epoch id, the open value ('<id>|<ms the usage rows were read by>').
 * Returns 1; 0 when the epoch is another one or nodes are still waited for, or the marker expired (Redis lost its state
 * again, or the seed took too long and another node seeds): the seed is not trusted then.
 */
export const SEEDED = `
local epoch = redis.call('GET', KEYS[1])
if not epoch or string.match(epoch, '^([^|]*)|') ~= ARGV[1] then return 0 end
if redis.call('SCARD', KEYS[2]) > 0 or redis.call('DEL', KEYS[3]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
`;
