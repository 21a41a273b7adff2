import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../errors.js';
import { readCdktf } from './cdktf.js';
import { mergeDesired } from './merge.js';

function stackDir(stack: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-cdktf-read-'));
  writeFileSync(join(dir, 'cdk.tf.json'), JSON.stringify(stack));
  return dir;
}

const STACK = {
  resource: {
    agentgw_tenant: { acme: { id: 'acme', name: 'Acme' } },
    agentgw_agent: { bot: { name: 'bot', tenant_id: '${agentgw_tenant.acme.id}', policy_id: 'nope' } },
  },
};

describe('readCdktf: a synthesized stack read by the CLI itself (no module loaded by name)', () => {
  it('reads the desired state, references resolved, and names each object by its resource address', async () => {
    const dir = stackDir(STACK);
    const src = await readCdktf(dir);
    expect(src.file).toBe(join(dir, 'cdk.tf.json'));
    expect(src.content.agents).toEqual([{ name: 'bot', tenant_id: 'acme', policy_id: 'nope' }]);
    const desired = mergeDesired([src]);
    expect(desired.where({ kind: 'agent', id: 'acme/bot', field: 'policy_id' })).toBe(`${join(dir, 'cdk.tf.json')}: agentgw_agent.bot.policy_id`);
  });

  it('a directory without a synthesized stack is one sentence', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'agentgw-cdktf-empty-'));
    const err = await readCdktf(empty).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as Error).message).toMatch(/^cannot read the CDKTF app in .*: .*cdk\.tf\.json does not exist: run `cdktf synth` first/);
  });

  it('an invalid value names the resource address and the field', async () => {
    const dir = stackDir({ resource: { agentgw_tenant: { bad: { id: 'Not An Id', name: 'x' } }, agentgw_policy: { p: { id: 'p', monthly_budget: -1 } } } });
    await expect(readCdktf(dir)).rejects.toThrow(/cdk\.tf\.json: agentgw_tenant\.bad: id: must be lowercase.* \(and 1 more problem\)$/);
  });

  it('reads a cdktf.out directory holding one stack', async () => {
    const out = mkdtempSync(join(tmpdir(), 'agentgw-cdktf-out-'));
    mkdirSync(join(out, 'stacks', 'only'), { recursive: true });
    writeFileSync(join(out, 'stacks', 'only', 'cdk.tf.json'), JSON.stringify(STACK));
    writeFileSync(join(out, 'manifest.json'), JSON.stringify({ stacks: { only: { synthesizedStackPath: 'stacks/only/cdk.tf.json' } } }));
    expect((await readCdktf(out)).content.tenants).toEqual([{ id: 'acme', name: 'Acme' }]);
  });
});
