// The pins of MCP tools on both stores: the first definition recorded wins however many nodes record one at once, an
// accept replaces it (and says what it replaced), rolled back with its transaction; a database of the release before
// pinning gains the table at start.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { Kysely, type MigrationProvider, Migrator, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openTestStore, type TestStore } from '../test-support/store.js';
import { buildMigrations } from './migrations.js';
import { openStore } from './open-store.js';
import type { McpToolPinRecord } from './store.js';

function pin(tool: string, digest: string, description: string, by: string | null = null): McpToolPinRecord {
  return { server: 'crm', tool, digest, definition: { description, inputSchema: { type: 'object' }, annotations: null }, pinned_at: '2026-01-01T00:00:00.000Z', pinned_by: by };
}

describe.each(['sqlite', 'postgres'] as const)('MCP tool pins on %s', (kind) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(kind);
  });
  afterAll(async () => t?.close());

  test('the first definition recorded wins, also when nodes record at the same time; the answer is what is stored', async () => {
    const answers = await Promise.all([
      t.store.recordMcpToolPins([pin('lookup', 'a'.repeat(64), 'first')]),
      t.store.recordMcpToolPins([pin('lookup', 'b'.repeat(64), 'second')]),
      t.store.recordMcpToolPins([pin('lookup', 'c'.repeat(64), 'third'), pin('ping', 'd'.repeat(64), 'Answers pong.')]),
    ]);
    const stored = (await t.store.listMcpToolPins('crm')).find((p) => p.tool === 'lookup')!;
    for (const a of answers) expect(a.find((p) => p.tool === 'lookup')).toEqual(stored);
    expect((await t.store.listMcpToolPins()).map((p) => p.tool)).toEqual(['lookup', 'ping']);
    expect(await t.store.listMcpToolPins('other')).toEqual([]);
  });

  test('an accept replaces the pin and answers the one it replaced; a failed transaction leaves the pin as it was', async () => {
    const before = (await t.store.listMcpToolPins('crm')).find((p) => p.tool === 'ping')!;
    await expect(
      t.store.transaction(async (tx) => {
        await tx.acceptMcpToolPin(pin('ping', 'e'.repeat(64), 'Answers pong, then deletes everything.', 'root'));
        throw new Error('the audit entry could not be written');
      }),
    ).rejects.toThrow('audit entry');
    expect((await t.store.listMcpToolPins('crm')).find((p) => p.tool === 'ping')).toEqual(before);

    const replaced = await t.store.transaction((tx) => tx.acceptMcpToolPin(pin('ping', 'e'.repeat(64), 'Answers pong, twice.', 'root')));
    expect(replaced).toEqual(before);
    expect((await t.store.listMcpToolPins('crm')).find((p) => p.tool === 'ping')).toMatchObject({ digest: 'e'.repeat(64), pinned_by: 'root', definition: { description: 'Answers pong, twice.' } });
    expect(await t.store.transaction((tx) => tx.acceptMcpToolPin(pin('fresh', 'f'.repeat(64), 'New.', 'root')))).toBeUndefined();
  });
});

test('a database of the release before tool pinning (0012) gains the pins table at start, empty', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-upgrade-'));
  const path = join(dir, 'agentgw.db');
  try {
    const old = new Kysely<any>({ dialect: new SqliteDialect({ database: new Sqlite(path) }) });
    const provider: MigrationProvider = { getMigrations: async () => buildMigrations('sqlite') };
    expect((await new Migrator({ db: old, provider }).migrateTo('0012_usage_cleaned')).error).toBeUndefined();
    await old.destroy();
    const store = await openStore({ kind: 'sqlite', path, usageThread: false });
    try {
      expect(await store.listMcpToolPins()).toEqual([]);
      expect(await store.recordMcpToolPins([pin('lookup', 'a'.repeat(64), 'first')])).toHaveLength(1);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
