// The audit log in both stores: entries are appended in the transaction of the write they record (both stored, or
// neither), listed newest first with filters and a cursor, and a database of the release before gains the table at start.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { Kysely, type MigrationProvider, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TEST_PG_URL, dropSchema } from '../test-support/pg.js';
import { openTestStore, type TestStore } from '../test-support/store.js';
import { InvalidCursorError } from './kysely-store.js';
import { buildMigrations, type StorageKind } from './migrations.js';
import { openStore } from './open-store.js';
import type { AuditRecord, Store } from './store.js';

let n = 0;
const entry = (over: Partial<AuditRecord> = {}): AuditRecord => ({
  id: `aud_${(++n).toString().padStart(16, '0')}`,
  at: '2030-01-01T00:00:00.000Z',
  actor: { kind: 'admin_key', id: 'root', name: 'root' },
  action: 'tenant.create',
  object: { kind: 'tenant', id: 'acme' },
  tenant_id: 'acme',
  before: null,
  after: { id: 'acme', name: 'Acme' },
  request_id: `req_${n}`,
  change_id: null,
  ...over,
});
/** An entry as the interface lists it: without the tenant it is filed under. */
const listed = ({ tenant_id: _t, ...e }: AuditRecord) => e;

describe.each(['sqlite', 'postgres'] as const)('audit log on %s', (kind) => {
  let ts: TestStore;
  let store: Store;
  beforeAll(async () => {
    ts = await openTestStore(kind);
    store = ts.store;
  });
  afterAll(async () => ts?.close());

  test('an entry reads back as appended: before/after as JSON, actor, object, request and change ids', async () => {
    const e = entry({
      at: '2031-01-01T00:00:00.000Z',
      action: 'policy.update',
      object: { kind: 'policy', id: 'p-read-back' },
      before: { id: 'p-read-back', rules: { pii: 'off' }, labels: { a: 'b' } },
      after: { id: 'p-read-back', rules: { pii: 'block' }, labels: {} },
      change_id: 'sha256:abc',
    });
    await store.appendAudit(e);
    const page = await store.listAudit({ object_id: 'p-read-back', limit: 10 });
    expect(page).toEqual({ data: [listed(e)], next_cursor: null });
  });

  test('filters: since (inclusive), until (exclusive), actor by id or name, kind, object id, tenant', async () => {
    const actor = { kind: 'admin_key' as const, id: 'adk_filter000000001', name: 'ci-bot' };
    const a = entry({ at: '2032-01-01T00:00:00.000Z', actor, tenant_id: 'f-one', object: { kind: 'agent', id: 'agt_f1' } });
    const b = entry({ at: '2032-01-02T00:00:00.000Z', tenant_id: 'f-two', object: { kind: 'tenant', id: 'f-two' } });
    const c = entry({ at: '2032-01-03T00:00:00.000Z', actor, tenant_id: null, object: { kind: 'maintenance', id: 'maintenance' } });
    for (const e of [a, b, c]) await store.appendAudit(e);
    const ids = async (f: Parameters<Store['listAudit']>[0]) => (await store.listAudit(f)).data.map((e) => e.id);
    const window = { since: '2032-01-01T00:00:00Z', until: '2032-01-04T00:00:00Z', limit: 50 };
    expect(await ids(window)).toEqual([c.id, b.id, a.id]);
    expect(await ids({ ...window, since: '2032-01-02T00:00:00.000Z' })).toEqual([c.id, b.id]);
    // An offset is the same instant.
    expect(await ids({ ...window, until: '2032-01-03T01:00:00+01:00' })).toEqual([b.id, a.id]);
    expect(await ids({ ...window, actor: 'ci-bot' })).toEqual([c.id, a.id]);
    expect(await ids({ ...window, actor: 'adk_filter000000001' })).toEqual([c.id, a.id]);
    expect(await ids({ ...window, kind: 'agent' })).toEqual([a.id]);
    expect(await ids({ ...window, object_id: 'f-two' })).toEqual([b.id]);
    expect(await ids({ ...window, tenant_id: 'f-one' })).toEqual([a.id]);
    expect(await ids({ ...window, tenant_id: 'f-one', kind: 'tenant' })).toEqual([]);
  });

  test('pages newest first with a cursor, entries of the same instant included once each', async () => {
    const at = '2033-01-01T00:00:00.000Z';
    const all = [entry({ at }), entry({ at }), entry({ at }), entry({ at: '2033-01-01T00:00:00.001Z' }), entry({ at: '2032-12-31T23:59:59.999Z' })];
    for (const e of all) await store.appendAudit(e);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listAudit({ since: '2032-12-31T00:00:00Z', until: '2033-01-02T00:00:00Z', limit: 2, cursor });
      seen.push(...page.data.map((e) => e.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    const newestFirst = [...all].sort((x, y) => (x.at === y.at ? y.id.localeCompare(x.id) : y.at.localeCompare(x.at)));
    expect(seen).toEqual(newestFirst.map((e) => e.id));
    await expect(store.listAudit({ limit: 2, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidCursorError);
  });

  test('a transaction stores the write and its entry together; a throw keeps neither', async () => {
    await store.transaction(async (tx) => {
      await tx.createTenant({ id: 'tx-kept', name: 'Kept', labels: {} });
      await tx.appendAudit(entry({ object: { kind: 'tenant', id: 'tx-kept' }, tenant_id: 'tx-kept' }));
    });
    expect(await store.getTenant('tx-kept')).toBeDefined();
    expect((await store.listAudit({ object_id: 'tx-kept', limit: 10 })).data).toHaveLength(1);

    await expect(
      store.transaction(async (tx) => {
        await tx.createTenant({ id: 'tx-undone', name: 'Undone', labels: {} });
        await tx.appendAudit(entry({ object: { kind: 'tenant', id: 'tx-undone' }, tenant_id: 'tx-undone' }));
        throw new Error('the write failed after its entry');
      }),
    ).rejects.toThrow('the write failed after its entry');
    expect(await store.getTenant('tx-undone')).toBeUndefined();
    expect((await store.listAudit({ object_id: 'tx-undone', limit: 10 })).data).toEqual([]);

    // An entry that cannot be stored (here: an id already used) undoes the write it records.
    const used = entry({ object: { kind: 'tenant', id: 'tx-no-entry' } });
    await store.appendAudit(used);
    await expect(
      store.transaction(async (tx) => {
        await tx.createTenant({ id: 'tx-no-entry', name: 'No entry', labels: {} });
        await tx.appendAudit({ ...used, request_id: 'req_other' });
      }),
    ).rejects.toThrow();
    expect(await store.getTenant('tx-no-entry')).toBeUndefined();
  });

  test('writes that run their own transaction (deletes with checks, idempotent upserts) run inside a write transaction', async () => {
    await store.createTenant({ id: 'tx-nested', name: 'Nested', labels: {} });
    await store.putPolicy('tx-nested-p', { tenant_id: 'tx-nested', monthly_budget: null, daily_budget: null, allowed_models: null, allowed_tools: null, rules: (await import('../contract/index.js')).DEFAULT_RULES, labels: {} });
    const result = await store.transaction(async (tx) => {
      const policy = await tx.getPolicy('tx-nested-p');
      // A PUT of an existing policy through an upsert, then the checked deletes.
      expect((await tx.putPolicy('tx-nested-p', { ...policy!, labels: { v: '2' } })).created).toBe(false);
      expect(await tx.deleteTenant('tx-nested')).toBe('not_empty');
      return [await tx.deletePolicy('tx-nested-p'), await tx.deleteTenant('tx-nested')];
    });
    expect(result).toEqual(['deleted', 'deleted']);
    expect(await store.getTenant('tx-nested')).toBeUndefined();
  });

  test('idempotency rows: a second row under the same key is refused as false, inside a transaction too', async () => {
    const row = { key_hash: `idem-${kind}-${randomBytes(4).toString('hex')}`, scope: 'root', request_hash: 'h', response: '{}' };
    expect(await store.putIdempotent(row)).toBe(true);
    expect(await store.transaction((tx) => tx.putIdempotent({ ...row, response: '{"second":true}' }))).toBe(false);
    expect((await store.getIdempotent(row.key_hash, '2000-01-01T00:00:00.000Z'))?.response).toBe('{}');
  });

  test.runIf(kind === 'postgres')('a read through a write transaction locks the row: a concurrent write waits for the commit', async () => {
    await store.createTenant({ id: 'tx-locked', name: 'v0', labels: {} });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let read!: () => void;
    const hasRead = new Promise<void>((r) => (read = r));
    const first = store.transaction(async (tx) => {
      const before = await tx.getTenant('tx-locked');
      read();
      await held;
      await tx.updateTenant('tx-locked', { name: `${before!.name}+first` });
    });
    await hasRead;
    const second = store.transaction(async (tx) => {
      const before = await tx.getTenant('tx-locked');
      await tx.updateTenant('tx-locked', { name: `${before!.name}+second` });
    });
    await new Promise((r) => setTimeout(r, 100));
    release();
    await Promise.all([first, second]);
    // The second read what the first wrote: neither change was lost.
    expect((await store.getTenant('tx-locked'))?.name).toBe('v0+first+second');
  });
});

/** A database of the release before the audit log (migrated up to 0008), opened by this release afterwards. */
async function databaseBeforeAudit(kind: StorageKind): Promise<{ db: Kysely<any>; open(): Promise<Store>; remove(): Promise<void> }> {
  const provider: MigrationProvider = { getMigrations: async () => buildMigrations(kind) };
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-audit-upgrade-'));
    const path = join(dir, 'agentgw.db');
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new Sqlite(path) }) });
    expect((await new Migrator({ db, provider }).migrateTo('0008_usage_tool')).error).toBeUndefined();
    return { db, open: () => openStore({ kind, path, usageThread: false }), remove: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `u_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
  await admin.query(`create schema "${schema}"`);
  await admin.end();
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: TEST_PG_URL, options: `-c search_path=${schema}` }) }) });
  expect((await new Migrator({ db, provider, migrationTableSchema: schema }).migrateTo('0008_usage_tool')).error).toBeUndefined();
  return { db, open: () => openStore({ kind, url: TEST_PG_URL, schema }), remove: () => dropSchema(schema) };
}

describe.each(['sqlite', 'postgres'] as const)('upgrading a database of the release before the audit log on %s', (kind) => {
  test('the log is created empty at start; what was stored before is kept, and the next write is audited', async () => {
    const old = await databaseBeforeAudit(kind);
    try {
      const ts = '2026-04-01T00:00:00.000Z';
      await old.db.insertInto('tenants').values({ id: 'acme', name: 'Acme', labels: '{}', created_at: ts, updated_at: ts }).execute();
      await old.db.destroy();
      const store = await old.open();
      try {
        expect(await store.getTenant('acme')).toMatchObject({ name: 'Acme' });
        expect(await store.listAudit({ limit: 10 })).toEqual({ data: [], next_cursor: null });
        const e = entry({ action: 'tenant.update', object: { kind: 'tenant', id: 'acme' }, before: { name: 'Acme' }, after: { name: 'Acme Inc.' } });
        await store.transaction(async (tx) => {
          await tx.updateTenant('acme', { name: 'Acme Inc.' });
          await tx.appendAudit(e);
        });
        expect((await store.listAudit({ tenant_id: 'acme', limit: 10 })).data).toEqual([listed(e)]);
      } finally {
        await store.close();
      }
    } finally {
      await old.remove();
    }
  });
});
