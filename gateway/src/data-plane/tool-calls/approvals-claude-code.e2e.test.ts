// The real Claude Code CLI (headless, offline) through agentgw with a policy that holds `Bash` calls matching `rm *` for
// approval (approvals.timeout_s 3): approved through the API, the command runs (the folder is gone); denied, the run
// ends on the refusal naming the approval; not decided in time, it is refused naming the approval, and approving that
// approval afterwards lets the same command pass when the agent runs again in the same trace.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { eventually } from '../../test-support/admin-api.js';
import { type ClaudeCodeRun, runClaudeCode, toolResults } from '../../test-support/claude-code.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply, toolUseReply } from '../../test-support/scripted-anthropic.js';

const TEST_TIMEOUT_MS = 120_000;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: any) => (typeof b?.text === 'string' ? b.text : '')).join('');
  return '';
}

/** What the model proposes: its one Bash call. */
let command = '';
let upstream: ScriptedAnthropic;
let gw: TestGateway;
let admin: ReturnType<typeof adminClient>;
let agentKey = '';

beforeAll(async () => {
  upstream = await startScriptedAnthropic((body: any) => {
    const results = toolResults(body);
    if (results.length > 0) return textReply(`The command printed: [${textOf(results[0]!.content).trim()}]`);
    if (!Array.isArray(body?.tools) || body.tools.length === 0) return textReply('ok');
    return toolUseReply('Bash', { command, description: 'Delete it' });
  });
  gw = await startTestGateway({
    config: {
      providers: { anthropic: { type: 'anthropic', base_url: upstream.url, api_key: 'sk-ant-upstream-secret' } },
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5'] },
      approvals: { timeout_s: 3 },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('guard', { tool_rules: [{ tools: ['Bash'], when: { command: 'rm *' }, action: 'approve', reason: 'deletions need a person' }] });
  agentKey = (await admin.agent('acme', 'claude-code', 'guard')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const describeRun = (run: ClaudeCodeRun) => `exit ${run.code} timedOut ${run.timedOut}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;

async function withFolder(fn: (cwd: string, folder: string) => Promise<void>): Promise<void> {
  const cwd = await mkdtemp(join(tmpdir(), 'agentgw-cc-approvals-'));
  const folder = join(cwd, 'keep-me');
  try {
    await mkdir(folder);
    await writeFile(join(folder, 'precious-4242.txt'), 'x\n');
    await fn(cwd, folder);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

/** Claude Code in one trace (its requests carry X-Agent-Trace-Id). */
const claude = (trace: string, cwd: string) =>
  runClaudeCode({ baseUrl: gw.url, apiKey: agentKey, prompt: 'Delete the keep-me folder.', cwd, env: { ANTHROPIC_CUSTOM_HEADERS: `X-Agent-Trace-Id: ${trace}` }, timeoutMs: 90_000 });

const pendingIn = (trace: string) =>
  eventually(async () => ((await admin.call('GET', `/approvals?trace_id=${trace}&status=pending`)) as { data: Array<{ id: string; arguments: any }> }).data[0], 60_000, `a pending approval in ${trace}`);

async function callsOf(trace: string): Promise<any[]> {
  await gw.runtime.dataPlane.usage.flush();
  return ((await admin.call('GET', `/traces/${trace}`)) as { requests: Array<{ tool_calls: any[] | null }> }).requests.flatMap((s) => s.tool_calls ?? []);
}

describe('Claude Code under a tool rule holding `rm *` in Bash for approval', () => {
  test(
    'approved through the API: the command runs and the folder is gone; the trace says approved',
    async () => {
      await withFolder(async (cwd, folder) => {
        command = `rm -rf ${folder}`;
        const trace = 'cc-approved';
        const run = claude(trace, cwd);
        const held = await pendingIn(trace);
        expect(held.arguments.command).toBe(command);
        expect(existsSync(folder)).toBe(true);
        await admin.call('POST', `/approvals/${held.id}/approve`, { comment: 'fine' });
        const done = await run;
        expect(done.code, describeRun(done)).toBe(0);
        expect(done.json?.is_error, describeRun(done)).toBe(false);
        expect(existsSync(folder)).toBe(false);
        expect(done.json!.result).toContain('The command printed:');
        expect((await callsOf(trace)).filter((c) => c.name === 'Bash').map((c) => [c.decision, c.approval_id])).toEqual([['approved', held.id]]);
      });
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'denied through the API: the folder stays, the run ends on the refusal naming the approval',
    async () => {
      await withFolder(async (cwd, folder) => {
        command = `rm -rf ${folder}`;
        const trace = 'cc-denied';
        const run = claude(trace, cwd);
        const held = await pendingIn(trace);
        await admin.call('POST', `/approvals/${held.id}/deny`, { comment: 'not this one' });
        const done = await run;
        expect(done.code, describeRun(done)).toBe(0);
        expect(existsSync(join(folder, 'precious-4242.txt'))).toBe(true);
        expect(done.json!.result).toContain(`agentgw refused the call to Bash: denied by root (approval ${held.id}): not this one (policy guard, rule 1)`);
      });
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'not decided within 3 s: refused naming the approval; approved afterwards, the same command passes when the agent runs again',
    async () => {
      await withFolder(async (cwd, folder) => {
        command = `rm -rf ${folder}`;
        const trace = 'cc-late';
        const first = await claude(trace, cwd);
        expect(first.code, describeRun(first)).toBe(0);
        expect(existsSync(join(folder, 'precious-4242.txt'))).toBe(true);
        const timedOut = ((await admin.call('GET', `/approvals?trace_id=${trace}&status=timed_out`)) as { data: Array<{ id: string }> }).data[0]!;
        expect(first.json!.result).toContain(`not approved within 3 s (approval ${timedOut.id} timed out`);
        await admin.call('POST', `/approvals/${timedOut.id}/approve`, { comment: 'sorry, was away' });
        const again = await claude(trace, cwd);
        expect(again.code, describeRun(again)).toBe(0);
        expect(existsSync(folder)).toBe(false);
        expect((await callsOf(trace)).filter((c) => c.name === 'Bash').map((c) => [c.decision, c.approval_id])).toEqual([
          ['timed_out', timedOut.id],
          ['approved', timedOut.id],
        ]);
      });
    },
    TEST_TIMEOUT_MS,
  );
});
