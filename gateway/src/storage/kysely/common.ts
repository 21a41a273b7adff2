import type { CompiledQuery, Kysely } from 'kysely';
import { AgentgwError } from '../../contract/index.js';
import type { Database } from '../schema.js';
import { isForeignKeyViolation } from '../store-errors.js';
import type { Page, PageQuery } from '../store.js';

export const now = () => new Date().toISOString();

/** Runs a report's query: on the store's own connection, or by its report reader. */
export type Report = <R>(q: { compile(): CompiledQuery<R>; execute(): Promise<R[]> }) => Promise<R[]>;

/** Cursor = the sort key of the last row ((created_at, id) for resources), opaque to clients. */
export function encodeCursor(parts: string[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}
export function decodeCursor(cursor: string, parts = 2): string[] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === parts && v.every((x) => typeof x === 'string')) return v;
  } catch {
    // fall through
  }
  throw new InvalidCursorError();
}
/** A cursor the client made up or mangled: bad input (400), not a server fault. */
export class InvalidCursorError extends AgentgwError {
  constructor() {
    super('validation_failed', 'The cursor is not valid: pass the next_cursor of the previous page unchanged, or leave cursor out to start at the first page.', {
      param: 'cursor',
    });
  }
}

/** A budget column (PostgreSQL may answer a numeric as text). */
export const usdOrNull = (v: number | string | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

/** Keyset pagination over (created_at, id) for the simple resource tables. */
export async function pageOf<T extends 'tenants' | 'agents' | 'policies' | 'admin_keys', R>(
  db: Kysely<Database>,
  table: T,
  q: PageQuery & { tenant_id?: string },
  map: (row: any) => R,
  tenantColumn: boolean,
): Promise<Page<R>> {
  let query = db.selectFrom(table as 'tenants').selectAll();
  if (q.tenant_id !== undefined && tenantColumn) query = query.where('tenant_id' as 'id', '=', q.tenant_id);
  if (q.tenant_id !== undefined && !tenantColumn) query = query.where('id', '=', q.tenant_id);
  if (q.cursor) {
    const [created, id] = decodeCursor(q.cursor);
    query = query.where((eb) => eb.or([eb('created_at', '>', created), eb.and([eb('created_at', '=', created), eb('id', '>', id)])]));
  }
  const rows = await query.orderBy('created_at').orderBy('id').limit(q.limit + 1).execute();
  const more = rows.length > q.limit;
  const data = rows.slice(0, q.limit);
  const last = data[data.length - 1];
  return { data: data.map(map), next_cursor: more && last ? encodeCursor([last.created_at, last.id]) : null };
}

/** Runs `fn` in a transaction: the caller's when `db` is one already (Kysely does not nest them), else a new one. */
export function inTransaction<T>(db: Kysely<Database>, fn: (tx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/** A delete that a concurrent insert naming the row beat: answered as `inUse`, as the check would have. */
export async function deleteChecked<R extends string, U extends string>(run: () => Promise<R>, inUse: U): Promise<R | U> {
  try {
    return await run();
  } catch (e) {
    if (isForeignKeyViolation(e)) return inUse;
    throw e;
  }
}

/**
 * Times are stored as toISOString() text (UTC, milliseconds) and compared as text, so a bound given with an offset
 * or without milliseconds is brought to the same form first.
 */
export function utc(ts: string): string {
  const ms = Date.parse(ts);
  return Number.isNaN(ms) ? ts : new Date(ms).toISOString();
}

export function traceKey(tenantId: string, traceId: string): string {
  return `${tenantId}\u0000${traceId}`;
}

export function round(n: number): number {
  return Math.round(n * 1e10) / 1e10;
}
