// `agentgw approvals` (the built binary) against a real gateway whose policy holds a tool call for a person: the
// upstream is a local server speaking OpenAI's wire format that proposes the call, the agent the official OpenAI SDK.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient } from '../../../gateway/src/test-support/admin.js';
import { startTestGateway, type TestGateway } from '../../../gateway/src/test-support/gateway.js';
import { startScriptedOpenAI, type ScriptedOpenAI } from '../../../gateway/src/test-support/scripted-openai.js';
import type { Approval } from '../admin-client/types.js';
import { runCli, startCli } from './__fixtures__/harness.js';

const APPROVAL_FIELDS = [
  'agent_id', 'arguments', 'comment', 'created_at', 'decided_at', 'decided_by', 'expires_at', 'id', 'reason', 'request_id', 'rule', 'status',
  'tenant_id', 'tool', 'trace_id',
].sort();
/** What the model proposes: a deploy whose plan is long enough to be folded, and a second line. */
const PLAN = `kubectl apply -f deploy/${'service-'.repeat(20)}prod.yaml --server-side --force-conflicts\nkubectl rollout status deploy/api`;
const TOOLS: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'deploy', parameters: { type: 'object', properties: { env: { type: 'string' }, plan: { type: 'string' } } } } },
];

describe.sequential('agentgw approvals against a real gateway', () => {
  let up: ScriptedOpenAI;
  let gw: TestGateway;
  let key: string;
  let viewerKey: string;
  let globexAdminKey: string;
  let env: NodeJS.ProcessEnv;
  let admin: ReturnType<typeof adminClient>;
  const cli = (...args: string[]) => runCli(args, env);

  beforeAll(async () => {
    up = await startScriptedOpenAI(() => ({ content: 'Deploying.', tool_calls: [{ id: 'call_deploy', name: 'deploy', arguments: { env: 'prod', plan: PLAN } }] }));
    gw = await startTestGateway({ config: { providers: { openai: { type: 'openai', base_url: up.url, api_key: 'sk-up' } }, approvals: { timeout_s: 60 } } });
    admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    await admin.policy('careful', { tenant_id: 'acme', tool_rules: [{ tools: ['deploy'], action: 'approve', reason: 'deploys need a person' }] });
    key = (await admin.agent('acme', 'deployer', 'careful')).api_key;
    viewerKey = (await admin.call('POST', '/admin-keys', { name: 'auditor', role: 'viewer' })).api_key;
    await admin.tenant('globex');
    globexAdminKey = (await admin.call('POST', '/admin-keys', { name: 'globex ops', role: 'tenant_admin', tenant_id: 'globex' })).api_key;
    env = { AGENTGW_ADMIN_URL: gw.adminUrl, AGENTGW_ADMIN_KEY: gw.adminKey };
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  /** An agent's request whose answer proposes the deploy: it waits at the gateway until someone decides. */
  function heldRequest(trace: string) {
    const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl, maxRetries: 0, defaultHeaders: { 'x-agent-trace-id': trace } });
    return client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'ship it' }], tools: TOOLS });
  }

  /** The pending approval of a trace, once the gateway holds its call. */
  async function pendingOf(trace: string): Promise<Approval> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const page = (await admin.call('GET', `/approvals?status=pending&trace_id=${trace}`)) as { data: Approval[] };
      if (page.data[0]) return page.data[0];
      if (Date.now() > deadline) throw new Error(`no pending approval for trace ${trace}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('list shows the held call: tool, agent, rule and reason, waiting time, and its arguments whole, folded', async () => {
    const answer = heldRequest('deploy-1');
    const a = await pendingOf('deploy-1');

    const json = await cli('approvals', 'list', '--status', 'pending', '--json');
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout) as Approval[];
    expect(listed.map((x) => x.id)).toEqual([a.id]);
    expect(Object.keys(listed[0]!).sort()).toEqual(APPROVAL_FIELDS);
    expect(listed[0]).toMatchObject({ tool: 'deploy', trace_id: 'deploy-1', status: 'pending', arguments: { env: 'prod', plan: PLAN } });

    const plain = await cli('approvals', 'list', '--status', 'pending');
    expect(plain.code).toBe(0);
    const lines = plain.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`${a.id}  pending  deploy`);
    expect(lines[1]).toBe(`  agent acme/deployer, trace deploy-1, request ${a.request_id}`);
    expect(lines[2]).toMatch(/^ {2}held \S+Z by rule 1 of policy careful: deploys need a person$/);
    expect(lines[3]).toMatch(/^ {2}waiting \S+, expires \S+Z \(in \S+\)$/);
    expect(lines[4]).toBe('  arguments:');
    expect(lines[5]).toBe('    {');
    expect(lines[6]).toBe('      "env": "prod",');
    // The plan's first line is folded within 100 columns; its second line starts a line of its own.
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);
    expect(lines.join('\n').replace(/\n\s+/g, '')).toContain(JSON.stringify(PLAN.split('\n')[0]).slice(1, -1));
    expect(lines.some((l) => l.trim() === 'kubectl rollout status deploy/api"')).toBe(true);
    expect(plain.stderr).toContain(`agentgw approvals approve ${a.id}`);

    // The tenant and trace filters reach the gateway.
    expect(JSON.parse((await cli('approvals', 'list', '--trace', 'no-such-trace', '--json')).stdout)).toEqual([]);
    expect(JSON.parse((await cli('approvals', 'list', '--tenant', 'acme', '--json')).stdout).map((x: Approval) => x.id)).toContain(a.id);

    const approved = await cli('approvals', 'approve', a.id, '--comment', 'checked the plan');
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    expect(approved.stdout).toBe(`Approved ${a.id}: deploy of acme/deployer (trace deploy-1); the held call goes on to the agent as proposed.\n`);
    // The held request completes with the call as proposed.
    const done = await answer;
    expect(done.choices[0]!.message.tool_calls?.map((c) => c.type === 'function' && c.function.name)).toEqual(['deploy']);

    // traces show: the step's call, approved, which approval, how long it waited, who decided.
    await gw.runtime.dataPlane.usage.flush();
    const shown = await cli('traces', 'show', 'deploy-1');
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toMatch(new RegExp(`\\n {2}step 1 +deploy +approved +policy careful, rule 1: deploys need a person; ${a.id} waited \\S+, decided by root\\n`));
  }, 60_000);

  it('a second decision is 409 approval_decided, an unknown id 404 approval_not_found: exit 1 with a sentence', async () => {
    const [a] = (JSON.parse((await cli('approvals', 'list', '--trace', 'deploy-1', '--json')).stdout) as Approval[]);
    expect(a).toMatchObject({ status: 'approved', decided_by: 'root', comment: 'checked the plan' });

    for (const verb of ['approve', 'deny']) {
      const again = await cli('approvals', verb, a!.id);
      expect(again.code).toBe(1);
      expect(again.stdout).toBe('');
      expect(again.stderr).toMatch(new RegExp(`^Error: approval ${a!.id} cannot be (approved|denied): it was already decided, and a decision is final \\(.+\\); .*\\(409 approval_decided\\)\\n$`));
    }
    const unknown = await cli('approvals', 'approve', 'apr_doesnotexist');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      'Error: there is no approval apr_doesnotexist (or your admin key may not see its tenant): list them with agentgw approvals list (404 approval_not_found)\n',
    );
    expect((await cli('approvals', 'list', '--status', 'abandoned')).stdout).toBe('No abandoned approvals.\n');
    // A viewer may list but not decide.
    const viewer = await runCli(['approvals', 'deny', a!.id], { ...env, AGENTGW_ADMIN_KEY: viewerKey });
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toMatch(/^Error: your admin key may not decide approval apr_\S+: .*\(403 \w+\)\n$/);
    expect((await runCli(['approvals', 'list', '--json'], { ...env, AGENTGW_ADMIN_KEY: viewerKey })).code).toBe(0);
    // Another tenant's admin neither sees it nor may decide it.
    const globexEnv = { ...env, AGENTGW_ADMIN_KEY: globexAdminKey };
    expect(JSON.parse((await runCli(['approvals', 'list', '--json'], globexEnv)).stdout)).toEqual([]);
    const other = await runCli(['approvals', 'approve', a!.id], globexEnv);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/^Error: (there is no approval|your admin key may not decide approval) apr_\S+ .*\((404 approval_not_found|403 \w+)\)\n$/);
  }, 60_000);

  it('deny replaces the call with a refusal naming the approval; the list shows who denied and why', async () => {
    const answer = heldRequest('deploy-2');
    const a = await pendingOf('deploy-2');
    const denied = await cli('approvals', 'deny', a.id, '--comment', 'not on a Friday', '--json');
    expect(denied.code).toBe(0);
    expect(JSON.parse(denied.stdout)).toMatchObject({ id: a.id, status: 'denied', decided_by: 'root', comment: 'not on a Friday' });
    const done = await answer;
    expect(done.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(done.choices[0]!.message.content).toContain(a.id);

    const plain = await cli('approvals', 'list', '--status', 'denied');
    expect(plain.stdout).toMatch(new RegExp(`^${a.id} {2}denied {2}deploy\\n`));
    expect(plain.stdout).toMatch(/\n {2}denied by root at \S+Z, \S+ after it was held: "not on a Friday"\n/);
  }, 60_000);

  it('list --follow prints a call as it begins to wait and its decision when it is made, until Ctrl-C', async () => {
    const follow = startCli(['approvals', 'list', '--follow', '--interval', '0.2'], env);
    try {
      // Calls decided before the watch began are history: nothing is printed for them.
      await new Promise((r) => setTimeout(r, 600));
      expect(follow.stdout).toBe('');
      const answer = heldRequest('deploy-3');
      const a = await pendingOf('deploy-3');
      await follow.waitForStdout(new RegExp(`\\+ waiting for a decision\\n${a.id} {2}pending {2}deploy\\n`), 5000);
      await admin.call('POST', `/approvals/${a.id}/approve`, { comment: 'go' });
      await follow.waitForStdout(new RegExp(`~ ${a.id} approved by root at \\S+Z, \\S+ after it was held: "go" \\(deploy, acme/deployer, trace deploy-3\\)\\n`), 5000);
      await answer;
    } finally {
      follow.signal('SIGINT');
    }
    const ended = await follow.exited;
    expect(ended.code).toBe(0);
    expect(ended.stderr).toContain('Watching the approvals queue (Ctrl-C to stop)');
    // Each event once.
    expect(ended.stdout.match(/\+ waiting for a decision/g)).toHaveLength(1);
  }, 60_000);

  it('bad flags are refused before any request', async () => {
    const offline = { AGENTGW_ADMIN_URL: 'http://127.0.0.1:9/api', AGENTGW_ADMIN_KEY: 'x' };
    const status = await runCli(['approvals', 'list', '--status', 'waiting'], offline);
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(/argument 'waiting' is invalid\. Allowed choices are pending, approved, denied, timed_out, abandoned/);
    const follow = await runCli(['approvals', 'list', '--follow', '--status', 'denied'], offline);
    expect(follow.code).toBe(1);
    expect(follow.stderr).toBe('Error: --follow watches the pending queue and the decisions made on it: leave out --status, --limit and --cursor\n');
    const comment = await runCli(['approvals', 'approve', 'apr_x', '--comment', ' '], offline);
    expect(comment.stderr).toBe('Error: --comment must not be empty: leave it out, or say why\n');
  });
});

describe('approving a call after it timed out', () => {
  let up: ScriptedOpenAI;
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    up = await startScriptedOpenAI(() => ({ content: null, tool_calls: [{ id: 'call_deploy', name: 'deploy', arguments: { env: 'prod', plan: 'kubectl rollout restart deploy/api' } }] }));
    gw = await startTestGateway({ config: { providers: { openai: { type: 'openai', base_url: up.url, api_key: 'sk-up' } }, approvals: { timeout_s: 1 } } });
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    await admin.policy('careful', { tenant_id: 'acme', tool_rules: [{ tools: ['deploy'], action: 'approve', reason: 'deploys need a person' }] });
    key = (await admin.agent('acme', 'deployer', 'careful')).api_key;
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('says the same call may now pass once in its trace, and it does', async () => {
    const env = { AGENTGW_ADMIN_URL: gw.adminUrl, AGENTGW_ADMIN_KEY: gw.adminKey };
    const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl, maxRetries: 0, defaultHeaders: { 'x-agent-trace-id': 'late-1' } });
    const ask = () => client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'restart it' }], tools: TOOLS });
    const refused = await ask();
    expect(refused.choices[0]!.message.tool_calls ?? []).toEqual([]);
    const [timedOut] = JSON.parse((await runCli(['approvals', 'list', '--status', 'timed_out', '--json'], env)).stdout) as Approval[];
    expect(timedOut).toMatchObject({ trace_id: 'late-1', status: 'timed_out' });
    const plain = await runCli(['approvals', 'list', '--status', 'timed_out'], env);
    expect(plain.stdout).toMatch(/\n {2}timed out at \S+Z \(nobody decided in time\): the call was refused\n/);

    const approved = await runCli(['approvals', 'approve', timedOut!.id], env);
    expect(approved.stderr).toBe('');
    expect(approved.stdout).toBe(
      `Approved ${timedOut!.id}: deploy of acme/deployer (trace late-1); it had timed out (the agent got a refusal), so the same call may now pass once in trace late-1 within 15 minutes.\n`,
    );
    // The agent asks again: the same call passes this once, without waiting.
    const passed = await ask();
    expect(passed.choices[0]!.message.tool_calls?.map((c) => c.type === 'function' && c.function.name)).toEqual(['deploy']);
  }, 60_000);
});
