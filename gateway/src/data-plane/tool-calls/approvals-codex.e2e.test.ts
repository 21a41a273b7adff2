// The real Codex CLI (`codex exec --json`, headless, offline) through agentgw on a Responses upstream, with a policy that
// holds `exec_command` calls matching `rm *` for approval (approvals.timeout_s 3): approved through the API, the command
// runs (a plain `rm` of a file: Codex refuses `rm -f` style commands of its own accord); denied, the run ends on the refusal naming the approval; not decided in time it is refused naming the approval,
// and approving it afterwards lets the same command pass when Codex runs again in the same trace.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { eventually } from '../../test-support/admin-api.js';
import { type CodexRun, DEFAULT_CODEX_MODEL, codexCommands, execCommandArgs, runCodex } from '../../test-support/codex.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { type ScriptedResponses, declaredTools, functionCallOutputs, functionCallResponse, startScriptedResponses, textResponse } from '../../test-support/scripted-responses.js';

const RUN_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 150_000;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: any) => (typeof b?.text === 'string' ? b.text : '')).join('');
  return '';
}

/** The command line of the model's one exec_command call. */
let command = '';
let upstream: ScriptedResponses;
let gw: TestGateway;
let admin: ReturnType<typeof adminClient>;
let agentKey = '';

beforeAll(async () => {
  upstream = await startScriptedResponses((body: any) => {
    const outputs = functionCallOutputs(body);
    if (outputs.length > 0) return textResponse(`The command printed: [${textOf(outputs.at(-1)!.output).trim()}]`);
    if (declaredTools(body).length === 0) return textResponse('ok');
    return functionCallResponse('exec_command', execCommandArgs(command));
  });
  gw = await startTestGateway({
    config: {
      providers: { openai: { type: 'openai', base_url: upstream.url, api_key: 'sk-openai-upstream-secret' } },
      models: { [DEFAULT_CODEX_MODEL]: ['openai/gpt-5.1-codex'] },
      approvals: { timeout_s: 3 },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('guard', { tool_rules: [{ tools: ['exec_command'], when: { cmd: 'rm *' }, action: 'approve', reason: 'deletions need a person' }] });
  agentKey = (await admin.agent('acme', 'codex', 'guard')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const describeRun = (run: CodexRun) => `exit ${run.code} timedOut ${run.timedOut} error ${run.error}\nstdout: ${run.stdout.slice(-3000)}\nstderr: ${run.stderr.slice(-2000)}`;

async function withFolder(fn: (cwd: string, folder: string) => Promise<void>): Promise<void> {
  const cwd = await mkdtemp(join(tmpdir(), 'agentgw-codex-approvals-'));
  const folder = join(cwd, 'keep-me');
  try {
    await mkdir(folder);
    await writeFile(join(folder, 'precious-4242.txt'), 'x\n');
    await fn(cwd, folder);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

/** Codex in one trace (its requests carry X-Agent-Trace-Id). */
const codex = (trace: string, cwd: string) =>
  runCodex({ baseUrl: `${gw.url}/v1`, apiKey: agentKey, prompt: 'Delete the keep-me folder.', cwd, timeoutMs: RUN_TIMEOUT_MS, providerToml: `http_headers = { "X-Agent-Trace-Id" = "${trace}" }` });

const pendingIn = (trace: string) =>
  eventually(async () => ((await admin.call('GET', `/approvals?trace_id=${trace}&status=pending`)) as { data: Array<{ id: string; arguments: any }> }).data[0], 60_000, `a pending approval in ${trace}`);

async function callsOf(trace: string): Promise<any[]> {
  await gw.runtime.dataPlane.usage.flush();
  return ((await admin.call('GET', `/traces/${trace}`)) as { requests: Array<{ tool_calls: any[] | null }> }).requests.flatMap((s) => s.tool_calls ?? []);
}

describe('Codex under a tool rule holding `rm *` in exec_command for approval', () => {
  test(
    'approved through the API: the command runs and the file is gone',
    async () => {
      await withFolder(async (cwd, folder) => {
        command = `rm ${join(folder, 'precious-4242.txt')}`;
        const trace = 'codex-approved';
        const run = codex(trace, cwd);
        const held = await pendingIn(trace);
        expect(existsSync(join(folder, 'precious-4242.txt'))).toBe(true);
        await admin.call('POST', `/approvals/${held.id}/approve`, {});
        const done = await run;
        expect(done.code, describeRun(done)).toBe(0);
        expect(done.error, describeRun(done)).toBeNull();
        expect(codexCommands(done.events).length, describeRun(done)).toBe(1);
        expect(existsSync(join(folder, 'precious-4242.txt'))).toBe(false);
        expect((await callsOf(trace)).map((c) => [c.decision, c.approval_id])).toEqual([['approved', held.id]]);
      });
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'denied through the API: the file stays, the last message is the refusal naming the approval',
    async () => {
      await withFolder(async (cwd, folder) => {
        command = `rm ${join(folder, 'precious-4242.txt')}`;
        const trace = 'codex-denied';
        const run = codex(trace, cwd);
        const held = await pendingIn(trace);
        await admin.call('POST', `/approvals/${held.id}/deny`, { comment: 'not this one' });
        const done = await run;
        expect(done.code, describeRun(done)).toBe(0);
        expect(codexCommands(done.events)).toEqual([]);
        expect(existsSync(join(folder, 'precious-4242.txt'))).toBe(true);
        expect(done.lastMessage, describeRun(done)).toContain(`agentgw refused the call to exec_command: denied by root (approval ${held.id}): not this one (policy guard, rule 1)`);
      });
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'not decided within 3 s: refused naming the approval; approved afterwards, the same command passes when Codex runs again',
    async () => {
      await withFolder(async (cwd, folder) => {
        command = `rm ${join(folder, 'precious-4242.txt')}`;
        const trace = 'codex-late';
        const first = await codex(trace, cwd);
        expect(first.code, describeRun(first)).toBe(0);
        expect(existsSync(join(folder, 'precious-4242.txt'))).toBe(true);
        const timedOut = ((await admin.call('GET', `/approvals?trace_id=${trace}&status=timed_out`)) as { data: Array<{ id: string }> }).data[0]!;
        expect(first.lastMessage, describeRun(first)).toContain(`not approved within 3 s (approval ${timedOut.id} timed out`);
        await admin.call('POST', `/approvals/${timedOut.id}/approve`, {});
        const again = await codex(trace, cwd);
        expect(again.code, describeRun(again)).toBe(0);
        expect(existsSync(join(folder, 'precious-4242.txt'))).toBe(false);
        expect((await callsOf(trace)).map((c) => [c.decision, c.approval_id])).toEqual([
          ['timed_out', timedOut.id],
          ['approved', timedOut.id],
        ]);
      });
    },
    TEST_TIMEOUT_MS,
  );
});
