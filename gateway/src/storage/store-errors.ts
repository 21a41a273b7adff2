import { type AgentgwError, storeUnavailableError } from '../contract/errors.js';

/** Code of DatabaseTimeoutError. */
const DEADLINE_CODE = 'AGENTGW_DB_DEADLINE';

/**
 * A database call that did not finish within limits.db_timeout_ms (waiting for a connection included): the database
 * is frozen, overloaded or cut off. Its connection is closed, never reused, so no late answer lands on another call.
 */
export class DatabaseTimeoutError extends Error {
  readonly code = DEADLINE_CODE;
  constructor(readonly timeoutMs: number) {
    super(`the database did not answer within limits.db_timeout_ms (${timeoutMs} ms)`);
  }
}

/** Socket-level failures: the server is not there, went away, or did not answer in time. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOTCONN',
  'ECONNCLOSED',
]);

/** PostgreSQL SQLSTATEs of a server that is shutting down, starting up or out of connections. */
const PG_UNAVAILABLE_CODES = new Set([
  '57P01', // admin_shutdown: terminating connection due to administrator command
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the database system is starting up / shutting down
  '57P05', // idle_session_timeout (the server closed an idle session)
  '53300', // too_many_connections
  '57014', // query_canceled: statement_timeout (limits.db_timeout_ms) passed on the server
]);

/** Messages of pg, pg-pool and SQLite for a connection that is gone or could not be made (they carry no code). */
const MESSAGES = [
  /^Connection terminated/i, // pg: "Connection terminated", "... unexpectedly", "... due to connection timeout"
  /timeout exceeded when trying to connect/i, // pg-pool: connectionTimeoutMillis passed
  /is not queryable/i, // pg: "Client has encountered a connection error and is not queryable"
  /Query read timeout/i, // pg: query_timeout passed
];

/**
 * True when `err` says the database could not be reached or dropped the connection (PostgreSQL restarted, stopped,
 * unreachable, out of connections; SQLite locked past its busy timeout), as opposed to a query it refused. The one
 * place such errors are recognised: the admin interface answers them with 503 store_unavailable.
 */
export function isStoreUnavailableError(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as { code?: unknown; message?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code) {
    if (code === DEADLINE_CODE || NETWORK_CODES.has(code) || PG_UNAVAILABLE_CODES.has(code)) return true;
    // Class 08: connection exception (08000, 08003, 08006, 08001, 08004, 08P01...).
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
    if (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_')) return true;
  }
  if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string))) return true;
  // Node's connect to a name with several addresses fails with an AggregateError of each attempt.
  // (An error's `cause` is not followed: fetch's "fetch failed" wraps an upstream's ECONNREFUSED, which is no store fault.)
  return Array.isArray(e.errors) && e.errors.some((x) => isStoreUnavailableError(x, depth + 1));
}

/**
 * True when `err` says the database is down (not reachable, or not answering within its deadline), not merely that one
 * query ran past statement_timeout on a server that answers: what StoreHealth counts as an outage.
 */
export function isStoreOutage(err: unknown): boolean {
  return isStoreUnavailableError(err) && (err as { code?: unknown }).code !== '57014';
}

/** CONTRACT's 503 for a request whose database is unreachable: fail fast, retry later. */
export function storeUnavailable(err?: unknown): AgentgwError {
  const within = err instanceof DatabaseTimeoutError ? ` (${err.timeoutMs} ms)` : (err as { code?: unknown } | undefined)?.code === '57014' ? '' : undefined;
  return storeUnavailableError(
    within === undefined
      ? 'The database is unreachable at the moment, so this request could not be completed'
      : `The database did not answer within limits.db_timeout_ms${within}, so this request could not be completed`,
  );
}

/** A write that names a row that does not exist (PostgreSQL and SQLite): part of the Store's error vocabulary. */
export function isForeignKeyViolation(e: unknown): boolean {
  const err = e as { code?: string };
  return err?.code === '23503' || err?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** A write that would duplicate a unique key (PostgreSQL and SQLite). */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string };
  return err?.code === '23505' || err?.code === 'SQLITE_CONSTRAINT_UNIQUE' || err?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
