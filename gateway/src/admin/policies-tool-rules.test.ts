// tool_rules on policies over HTTP: stored and answered as written, cleared with null, refused with a 400 naming the rule
// and the field when a glob, a JSON pointer, a regular expression or an action cannot be used, and seen in the audit log.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ToolRule } from '../contract/index.js';
import { adminApi, expectError, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

const RULES: ToolRule[] = [
  { tools: ['Bash', 'exec_command', 'shell'], when: { command: ['rm *', '*rm -rf*', 're:git\\s+push\\s+.*--force'] }, action: 'deny', reason: 'destructive command' },
  { tools: ['Write', 'Edit', 'MultiEdit'], when: { file_path: ['/etc/*', '*/.ssh/*'], '/edits/0/file_path': '/etc/*' }, action: 'deny' },
  { tools: ['mcp__github__*'], action: 'approve' },
  { tools: ['Read', 'Grep', 'Glob'], action: 'allow' },
];

describe.each(['sqlite', 'postgres'] as const)('policy tool_rules over HTTP on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
    expect((await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } })).status).toBe(201);
  });
  afterAll(async () => gw?.close());

  test('are stored as written, kept when left out, and cleared with null', async () => {
    const created = await api('PUT', '/policies/guarded', { body: { tenant_id: 'acme', tool_rules: RULES } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.tool_rules).toEqual(RULES);
    expect((await api('GET', '/policies/guarded')).body.tool_rules).toEqual(RULES);

    const kept = await api('PUT', '/policies/guarded', { body: { rules: { rpm: 10 } } });
    expect(kept.body.tool_rules).toEqual(RULES);
    expect(kept.body.rules).not.toHaveProperty('tool_rules');

    const cleared = await api('PUT', '/policies/guarded', { body: { tool_rules: null } });
    expect(cleared.body.tool_rules).toBeNull();
    expect(cleared.body.rules.rpm).toBe(10);

    const plain = await api('PUT', '/policies/plain', { body: { tenant_id: 'acme' } });
    expect(plain.body.tool_rules).toBeNull();
  });

  test('a rule that cannot be used is a 400 naming the rule and the field', async () => {
    const put = (rule: unknown, at = 0) =>
      api('PUT', '/policies/bad', { body: { tenant_id: 'acme', tool_rules: [...RULES.slice(0, at), rule] } });
    const cases: Array<[unknown, string, RegExp, number?]> = [
      [{ tools: ['Bash x'], action: 'deny' }, 'tool_rules.0.tools.0', /not a tool glob/],
      [{ tools: ['Read', 'Wr[it]e'], action: 'deny' }, 'tool_rules.2.tools.1', /not a tool glob/, 2],
      [{ tools: [''], action: 'deny' }, 'tool_rules.0.tools.0', /empty/],
      [{ tools: [], action: 'deny' }, 'tool_rules.1.tools', /./, 1],
      [{ tools: ['Bash'], when: { '/edits/~2': 'x' }, action: 'deny' }, 'tool_rules.0.when', /"\/edits\/~2" is not a JSON pointer/],
      [{ tools: ['Bash'], when: { '/edits/0/file_path': ['/etc/*', 're:\\p{Foo}'] }, action: 'deny' }, 'tool_rules.0.when', /"\/edits\/0\/file_path".*linear-time engine/],
      [{ tools: ['Bash'], when: { command: 're:(?=rm)' }, action: 'deny' }, 'tool_rules.0.when.command', /linear-time engine/],
      [{ tools: ['Bash'], when: { command: ['ls', 're:(a)\\1'] }, action: 'deny' }, 'tool_rules.3.when.command.1', /linear-time engine/, 3],
      [{ tools: ['Bash'], action: 'block' }, 'tool_rules.0.action', /./],
      [{ tools: ['Bash'], action: 'deny', unless: {} }, 'tool_rules.0.unless', /Unknown field/],
      [{ tools: ['Bash'], when: { command: [] }, action: 'deny' }, 'tool_rules.0.when.command', /./],
    ];
    for (const [rule, param, message, at] of cases) {
      const r = await put(rule, at);
      expectError(r, 400, 'validation_failed', param);
      expect(r.body.error.message, JSON.stringify(rule)).toMatch(message);
    }
    expectError(await api('GET', '/policies/bad'), 404, 'policy_not_found');
  });

  test('show in the audit entry of a policy write, before and after', async () => {
    await api('PUT', '/policies/audited', { body: { tenant_id: 'acme' } });
    const r = await api('PUT', '/policies/audited', { body: { tool_rules: RULES.slice(0, 1) } });
    expect(r.status).toBe(200);
    const entry = (await api('GET', '/audit?object_id=audited&limit=1')).body.data[0];
    expect(entry.action).toBe('policy.update');
    expect(entry.before.tool_rules).toBeNull();
    expect(entry.after.tool_rules).toEqual(RULES.slice(0, 1));
  });
});
