import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../config.js';
import { createRuntime } from '../runtime.js';
import { adminApi, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway, type TestStorage } from '../test-support/gateway.js';

/** Every row of every table, each as one JSON text, by table. */
async function dumpTables(storage: TestStorage): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (storage.kind === 'sqlite') {
    const db = new SQLite(storage.path, { readonly: true });
    try {
      const tables = db.prepare(`select name from sqlite_master where type = 'table'`).all() as Array<{ name: string }>;
      for (const { name } of tables) out.set(name, db.prepare(`select * from "${name}"`).all().map((row) => JSON.stringify(row)));
    } finally {
      db.close();
    }
    return out;
  }
  const client = new pg.Client({ connectionString: storage.url });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(`select table_name from information_schema.tables where table_schema = $1`, [storage.schema]);
    for (const { table_name } of tables.rows) {
      const rows = await client.query<{ j: string }>(`select row_to_json(t)::text as j from "${storage.schema}"."${table_name}" t`);
      out.set(table_name, rows.rows.map((r) => r.j));
    }
  } finally {
    await client.end();
  }
  return out;
}

/** Fails naming the table when any secret, or the secret part after its shown prefix, is stored anywhere. */
function expectNoSecrets(tables: Map<string, string[]>, secrets: string[]): void {
  expect(tables.size).toBeGreaterThan(0);
  for (const secret of secrets) {
    const needles = [secret, secret.slice(12)];
    for (const [table, rows] of tables) {
      for (const row of rows) {
        for (const needle of needles) expect(row.includes(needle), `${table} holds a secret in plaintext: ${row.slice(0, 200)}`).toBe(false);
      }
    }
  }
}

describe.each(['sqlite', 'postgres'] as const)('no plaintext keys at rest on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  const secrets: string[] = [];
  const IDEMPOTENCY_KEY = 'idem-9f2c71d0-at-rest';
  let replayedKey = '';

  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
    secrets.push(gw.adminKey);
    expect((await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } })).status).toBe(201);
    for (const [name, role, tenant_id] of [
      ['ops', 'admin', null],
      ['team', 'tenant_admin', 'acme'],
      ['audit', 'viewer', 'acme'],
    ] as const) {
      const r = await api('POST', '/admin-keys', { body: { name, role, tenant_id } });
      expect(r.status).toBe(201);
      secrets.push(r.body.api_key);
    }
    const plain = await api('POST', '/agents', { body: { name: 'plain', tenant_id: 'acme' } });
    secrets.push(plain.body.api_key);

    const rotated = await api('POST', '/agents', { body: { name: 'rotated', tenant_id: 'acme' } });
    secrets.push(rotated.body.api_key);
    const rotation = await api('POST', `/agents/${rotated.body.id}/rotate-key`);
    expect(rotation.status).toBe(200);
    secrets.push(rotation.body.api_key);

    const headers = { 'idempotency-key': IDEMPOTENCY_KEY };
    const first = await api('POST', '/agents', { body: { name: 'idempotent', tenant_id: 'acme' }, headers });
    const replay = await api('POST', '/agents', { body: { name: 'idempotent', tenant_id: 'acme' }, headers });
    expect(replay.body.api_key).toBe(first.body.api_key);
    replayedKey = first.body.api_key;
    secrets.push(replayedKey);
  });
  afterAll(async () => gw?.close());

  test('no agent or admin key (root included, old and rotated) is in any column of any table', async () => {
    const tables = await dumpTables(gw.storage);
    for (const t of ['agents', 'admin_keys', 'idempotency', 'settings', 'tenants']) expect(tables.has(t), t).toBe(true);
    expect(tables.get('agents')!.length).toBe(3);
    expect(tables.get('admin_keys')!.length).toBe(4);
    expect(secrets).toHaveLength(8);
    expectNoSecrets(tables, secrets);
    // The keys are there as hashes: every stored hash is distinct.
    const hashes = [...tables.get('agents')!, ...tables.get('admin_keys')!].map((row) => JSON.parse(row).key_hash as string);
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  test('the stored replay of an Idempotency-Key is sealed: neither the agent key nor the idempotency key is readable', async () => {
    const rows = (await dumpTables(gw.storage)).get('idempotency')!.map((r) => JSON.parse(r) as Record<string, string>);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    for (const value of Object.values(row)) {
      expect(String(value)).not.toContain(replayedKey);
      expect(String(value)).not.toContain(IDEMPOTENCY_KEY);
    }
    expect(row.response).not.toContain('api_key');
    expect(row.response).not.toContain('idempotent');
    expect(() => JSON.parse(row.response!)).toThrow();
    expect(gw.runtime.hasher.unseal('a-wrong-key', row.response!)).toBeUndefined();
    expect(JSON.parse(gw.runtime.hasher.unseal(IDEMPOTENCY_KEY, row.response!)!).api_key).toBe(replayedKey);
  });
});

describe('a generated root key', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentgw-rootkey-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('is announced once, stored only as a hash, and kept on the next start', async () => {
    const path = join(dir, 'agentgw.db');
    const env = {} as NodeJS.ProcessEnv;
    const config = loadConfig({ env, overrides: { log_level: 'silent', storage: { kind: 'sqlite', path } } });
    const announced: string[] = [];
    const first = await createRuntime(config, { env, announceKey: (k) => announced.push(k) });
    try {
      expect(announced).toHaveLength(1);
      expect(first.generatedAdminKey).toBe(announced[0]);
      expect(announced[0]).toMatch(/^adk_[0-9A-Za-z]{32}$/);
      expect(await first.store.findAdminKeyByHash(first.hasher.hash(announced[0]!))).toMatchObject({ id: 'root', role: 'admin' });
    } finally {
      await first.close();
    }
    expectNoSecrets(await dumpTables({ kind: 'sqlite', path }), announced);

    const second = await createRuntime(config, { env, announceKey: (k) => announced.push(k) });
    try {
      expect(second.generatedAdminKey).toBeNull();
      expect(announced).toHaveLength(1);
      expect(await second.store.findAdminKeyByHash(second.hasher.hash(announced[0]!))).toMatchObject({ id: 'root' });
    } finally {
      await second.close();
    }
  });
});
