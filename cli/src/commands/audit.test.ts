// `agentgw apply` names its writes with the plan's digest (x-agentgw-change-id), which the audit log keeps; `agentgw
// audit` lists the log with the interface's filters, as a table or the entries as JSON.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestGateway, type TestGateway } from '../../../gateway/src/test-support/gateway.js';
import type { AuditEntry } from '../admin-client/types.js';
import { CliError } from '../errors.js';
import { planChanges } from '../reconcile/engine.js';
import { connect } from '../services/connection.js';
import { loadDesired } from '../services/desired-state.js';
import { planDigest } from '../services/plan-digest.js';
import { runChanges } from '../services/run-changes.js';
import { auditCommand, changedFields } from './audit.js';

const FILE = `version: 1
tenants:
  - id: audited
    name: Audited Inc.
policies:
  - id: audited-std
    tenant_id: audited
    monthly_budget: 10
agents:
  - name: bot
    tenant_id: audited
    policy_id: audited-std
`;

/** What a call printed on stdout (stderr is left alone). */
async function printed(run: () => Promise<number>): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  try {
    return { code: await run(), stdout };
  } finally {
    spy.mockRestore();
  }
}

describe('apply names its writes; agentgw audit lists them', () => {
  let gw: TestGateway;
  let dir: string;
  let conn: { adminUrl: string; adminKey: string };
  beforeAll(async () => {
    gw = await startTestGateway();
    conn = { adminUrl: gw.adminUrl, adminKey: gw.adminKey };
    dir = mkdtempSync(join(tmpdir(), 'agentgw-audit-cli-'));
    writeFileSync(join(dir, 'agentgw.yaml'), FILE);
  });
  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => vi.restoreAllMocks());

  it("every write of an apply carries the plan's digest as change_id; other writes carry none", async () => {
    const desired = await loadDesired({ file: [join(dir, 'agentgw.yaml')] }, 'plan');
    const digest = planDigest(await planChanges(connect(conn), desired.content, { mode: 'sync' }));
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);

    const applied = await printed(() => runChanges('apply', { ...conn, file: [join(dir, 'agentgw.yaml')], autoApprove: true, json: true }));
    expect(applied.code).toBe(0);
    const entries = (await connect(conn).listAudit({ limit: 500 })).data;
    expect(entries.map((e) => e.action).sort()).toEqual(['agent.create', 'policy.create', 'tenant.create']);
    for (const e of entries) expect(e.change_id, e.action).toBe(digest);

    await connect(conn).updateTenant('audited', { name: 'Renamed by hand' });
    const [latest] = (await connect(conn).listAudit({ limit: 1 })).data;
    expect(latest).toMatchObject({ action: 'tenant.update', change_id: null });
  });

  it('the digest is the plan: the same changes give the same digest, whatever the key order; another plan another', () => {
    const change = (after: Record<string, unknown>) => ({
      changes: [{ op: 'create' as const, kind: 'tenant' as const, id: 't', before: null, after: after as never, changes: [], owner: null, serverId: 'x' }],
      summary: { add: 1, change: 0, destroy: 0 },
    });
    expect(planDigest(change({ id: 't', name: 'T' }))).toBe(planDigest(change({ name: 'T', id: 't' })));
    expect(planDigest(change({ id: 't', name: 'T' }))).not.toBe(planDigest(change({ id: 't', name: 'U' })));
  });

  it('audit --json prints the entries as the interface lists them, filtered', async () => {
    const all = (await connect(conn).listAudit({ limit: 500 })).data;
    const json = await printed(() => auditCommand({ ...conn, json: true }));
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(all);

    const agents = JSON.parse((await printed(() => auditCommand({ ...conn, json: true, kind: 'agent' }))).stdout) as AuditEntry[];
    expect(agents.map((e) => e.action)).toEqual(['agent.create']);
    const byTenant = JSON.parse((await printed(() => auditCommand({ ...conn, json: true, tenant: 'audited', actor: 'root', limit: '2' }))).stdout) as AuditEntry[];
    expect(byTenant).toEqual(all.slice(0, 2));
    const none = JSON.parse((await printed(() => auditCommand({ ...conn, json: true, until: '2000-01-01T00:00:00Z' }))).stdout);
    expect(none).toEqual([]);
  });

  it('audit prints a table: time, who, what, which object, which fields changed', async () => {
    const { stdout } = await printed(() => auditCommand({ ...conn, object: 'audited' }));
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^AT\s+ACTOR\s+ACTION\s+OBJECT\s+CHANGED$/);
    expect(lines[1]).toMatch(/^\S+Z\s+root\s+tenant\.update\s+audited\s+name$/);
    expect(lines[2]).toMatch(/^\S+Z\s+root\s+tenant\.create\s+audited\s+created$/);
    expect(lines).toHaveLength(3);
  });

  it('bad flags are flag errors before any request', async () => {
    await expect(auditCommand({ ...conn, since: 'yesterday' })).rejects.toThrow(CliError);
    await expect(auditCommand({ ...conn, limit: '0' })).rejects.toThrow('--limit must be a whole number from 1 to 500');
  });

  it('changed fields: created, deleted, the fields that differ (not the update time), or unchanged', () => {
    expect(changedFields({ before: null, after: { id: 'a' } })).toBe('created');
    expect(changedFields({ before: { id: 'a' }, after: null })).toBe('deleted');
    expect(changedFields({ before: { name: 'a', labels: { x: '1' }, updated_at: '1' }, after: { name: 'b', labels: { x: '1' }, updated_at: '2' } })).toBe('name');
    expect(changedFields({ before: { stopped: { at: '1' } }, after: { stopped: { at: '1' } } })).toBe('unchanged');
  });
});
