import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient, planChanges, reconcile } from '@agentgw/cli';
import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { startTestGateway, type TestGateway } from '../../gateway/src/test-support/gateway.js';
import { buildWorkspace, CLI_BIN } from '../../terraform-provider-bridge/src/test-support/build.js';
import { desiredStateFromCdktf } from '../../terraform-provider-bridge/src/index.js';

type Example = typeof import('./main.js');

describe('the example CDKTF stack, deployed with agentgw', () => {
  let gw: TestGateway;
  let out: string;
  let stackDir: string;
  let example: Example;

  /** The real `agentgw` binary; async because the gateway answers from this same process. */
  function agentgw(...args: string[]): Promise<{ status: number | null; out: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI_BIN, ...args], {
        env: { ...process.env, AGENTGW_ADMIN_URL: gw.adminUrl, AGENTGW_ADMIN_KEY: gw.adminKey, NO_COLOR: '1' },
      });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, out: text }));
    });
  }

  function setBudget(from: number, to: number) {
    const file = join(stackDir, 'cdk.tf.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace(`"monthly_budget": ${from}`, `"monthly_budget": ${to}`));
  }

  beforeAll(async () => {
    // The CLI binary loads @agentgw/cdktf from its build output.
    buildWorkspace();
    example = (await import('./main.js')) as Example;
    gw = await startTestGateway();
    out = mkdtempSync(join(tmpdir(), 'agentgw-example-'));
    example.buildApp(out).synth();
    stackDir = join(out, 'stacks', 'support');
  });

  afterAll(async () => {
    await gw?.close();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it('synthesizes to one tenant, two policies and three agents, references resolved', async () => {
    const desired = await desiredStateFromCdktf(stackDir);
    expect(desired.tenants).toEqual([{ id: 'initech', name: 'Initech', labels: { team: 'support' } }]);
    expect(desired.policies.map((p) => [p.id, p.tenant_id])).toEqual([
      ['initech-research', 'initech'],
      ['initech-support', 'initech'],
    ]);
    expect(desired.agents.map((a) => `${a.tenant_id}/${a.name}:${a.policy_id}`)).toEqual([
      'initech/research-assistant:initech-research',
      'initech/support-bot:initech-support',
      'initech/support-triage:initech-support',
    ]);
  });

  it('deploys through the reconcile engine; a second plan is empty, a changed budget is one change', async () => {
    const client = new AdminClient({ baseUrl: gw.adminUrl, adminKey: gw.adminKey });
    const desired: DeclarativeFile = await desiredStateFromCdktf(stackDir);
    let result;
    const run = reconcile(client, desired, { mode: 'sync', dry: false });
    for (let step = await run.next(); ; step = await run.next()) {
      if (step.done) {
        result = step.value;
        break;
      }
    }
    expect(result.failed).toBeNull();
    expect(result.done).toHaveLength(6);
    expect(Object.keys(result.keys).sort()).toEqual(['initech/research-assistant', 'initech/support-bot', 'initech/support-triage']);

    expect((await planChanges(client, desired, { mode: 'sync' })).changes).toEqual([]);

    setBudget(250, 300);
    const changed = await planChanges(client, await desiredStateFromCdktf(stackDir), { mode: 'sync' });
    expect(changed.changes.map((c) => [c.op, c.kind, c.id, c.changes])).toEqual([
      ['update', 'policy', 'initech-support', [expect.objectContaining({ field: 'monthly_budget', old: 250, new: 300 })]],
    ]);
  });

  it('deploys with `agentgw apply --cdktf DIR --auto-approve`; a second plan is empty, a changed budget is one change', async () => {
    // The engine test above left budget 300 on file and 250 live: make the file and the gateway agree first.
    const apply = await agentgw('apply', '--cdktf', stackDir, '--auto-approve');
    expect(apply.out).toMatch(/0 added, 1 changed, 0 destroyed/);
    expect(apply.status).toBe(0);

    const again = await agentgw('plan', '--cdktf', stackDir, '--detailed-exitcode');
    expect(again.status).toBe(0);

    setBudget(300, 275);
    const plan = await agentgw('plan', '--cdktf', stackDir, '--detailed-exitcode', '--json');
    expect(plan.status).toBe(2);
    const doc = JSON.parse(plan.out.slice(plan.out.indexOf('{')));
    expect(doc.summary).toEqual({ add: 0, change: 1, destroy: 0 });
    expect(doc.changes[0]).toMatchObject({ op: 'update', kind: 'policy', id: 'initech-support' });
    expect(doc.changes[0].changes).toEqual([expect.objectContaining({ field: 'monthly_budget', old: 300, new: 275 })]);
  });
});

describe('the example CDKTF app, run', () => {
  it('says what it wrote and how to deploy it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-example-synth-'));
    try {
      const { synthesize } = (await import('./main.js')) as Example;
      const stack = join(dir, 'cdktf.out', 'stacks', 'support');
      expect(synthesize(join(dir, 'cdktf.out'))).toEqual([
        `Wrote ${relative(process.cwd(), join(stack, 'cdk.tf.json'))}: stack support, 1 tenant, 2 policies, 3 agents. ` +
          `Deploy it with: npx agentgw apply --cdktf ${relative(process.cwd(), stack)}`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
