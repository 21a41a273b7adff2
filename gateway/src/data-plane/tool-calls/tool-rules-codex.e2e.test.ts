// The real Codex CLI (`codex exec --json`, headless, offline) through agentgw with a policy denying its shell tool
// (`exec_command`) when `cmd` matches `rm *`, on a Responses upstream (native) and an Anthropic-format upstream (translated):
// the model's `rm -rf <folder>` never reaches Codex (the folder is still there, the run ends on agentgw's refusal sentence,
// the trace lists the denied call and its rule); an allowed `ls <folder>` really runs and its output reaches the model.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { type CodexRun, DEFAULT_CODEX_MODEL, codexCommands, execCommandArgs, runCodex } from '../../test-support/codex.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { startScriptedAnthropic, textReply, toolUseReply } from '../../test-support/scripted-anthropic.js';
import { declaredTools, functionCallOutputs, functionCallResponse, startScriptedResponses, textResponse } from '../../test-support/scripted-responses.js';

const REFUSED = 'agentgw refused the call to exec_command: no deletions (policy guard, rule 1)';
const RUN_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 90_000;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: any) => (typeof b?.text === 'string' ? b.text : '')).join('');
  return '';
}

/** What the model proposes next (the command line of its one exec_command call). */
let command = '';

interface Upstream {
  url: string;
  count(): number;
  /** The tool outputs the requests from index `from` on carried back to the model. */
  toolOutputsFrom(from: number): string[];
  close(): Promise<void>;
}

async function responsesUpstream(): Promise<Upstream> {
  const raw = await startScriptedResponses((body: any) => {
    const outputs = functionCallOutputs(body);
    if (outputs.length > 0) return textResponse(`The command printed: ${textOf(outputs.at(-1)!.output).trim()}`);
    if (declaredTools(body).length === 0) return textResponse('ok');
    return functionCallResponse('exec_command', execCommandArgs(command));
  });
  return {
    url: raw.url,
    count: () => raw.responseRequests.length,
    toolOutputsFrom: (from) => raw.responseRequests.slice(from).flatMap((r) => functionCallOutputs(r.body).map((o) => textOf(o.output))),
    close: () => raw.close(),
  };
}

async function anthropicUpstream(): Promise<Upstream> {
  const results = (body: any): any[] =>
    (Array.isArray(body?.messages) ? body.messages : []).flatMap((m: any) => (m?.role === 'user' && Array.isArray(m.content) ? m.content.filter((b: any) => b?.type === 'tool_result') : []));
  const raw = await startScriptedAnthropic((body: any) => {
    const r = results(body);
    if (r.length > 0) return textReply(`The command printed: ${textOf(r.at(-1).content).trim()}`);
    if (!Array.isArray(body?.tools) || body.tools.length === 0) return textReply('ok');
    return toolUseReply('exec_command', execCommandArgs(command));
  });
  return {
    url: raw.url,
    count: () => raw.messageRequests.length,
    toolOutputsFrom: (from) => raw.messageRequests.slice(from).flatMap((r) => results(r.body).map((b) => textOf(b.content))),
    close: () => raw.close(),
  };
}

const CASES = [
  {
    name: 'native (Responses upstream)',
    start: responsesUpstream,
    config: (url: string) => ({
      providers: { openai: { type: 'openai', base_url: url, api_key: 'sk-openai-upstream-secret' } },
      models: { [DEFAULT_CODEX_MODEL]: ['openai/gpt-5.1-codex'] },
    }),
  },
  {
    name: 'translated (Anthropic-format upstream)',
    start: anthropicUpstream,
    config: (url: string) => ({
      providers: { anthropic: { type: 'anthropic', base_url: url, api_key: 'sk-ant-upstream-secret' } },
      models: { [DEFAULT_CODEX_MODEL]: ['anthropic/claude-sonnet-4-5'] },
    }),
  },
];

const describeRun = (run: CodexRun) => `exit ${run.code} timedOut ${run.timedOut} error ${run.error}\nstdout: ${run.stdout.slice(-3000)}\nstderr: ${run.stderr.slice(-2000)}`;

describe.each(CASES)('Codex under a tool rule denying `rm *` in exec_command, $name', (c) => {
  let gw: TestGateway;
  let upstream: Upstream;
  let admin: ReturnType<typeof adminClient>;
  let agents = 0;

  beforeAll(async () => {
    upstream = await c.start();
    gw = await startTestGateway({ config: c.config(upstream.url) });
    admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    await admin.policy('guard', { tool_rules: [{ tools: ['exec_command'], when: { cmd: 'rm *' }, action: 'deny', reason: 'no deletions' }] });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  async function newAgent(): Promise<{ id: string; key: string }> {
    agents += 1;
    const agent = await admin.agent('acme', `codex-${agents}`, 'guard');
    return { id: agent.id, key: agent.api_key };
  }

  async function toolCallsOf(agentId: string): Promise<unknown[]> {
    await gw.runtime.dataPlane.usage.flush();
    const list = await admin.call('GET', `/traces?agent_id=${agentId}`);
    expect(list.data).toHaveLength(1);
    const trace = await admin.call('GET', `/traces/${encodeURIComponent(list.data[0].trace_id)}`);
    return trace.requests.flatMap((s: any) => s.tool_calls);
  }

  async function withFolder(fn: (cwd: string, folder: string) => Promise<void>): Promise<void> {
    const cwd = await mkdtemp(join(tmpdir(), 'agentgw-codex-rules-'));
    const folder = join(cwd, 'keep-me');
    try {
      await mkdir(folder);
      await writeFile(join(folder, 'precious-4242.txt'), 'x\n');
      await fn(cwd, folder);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  }

  test(
    'a proposed `rm -rf <folder>` is refused: the folder is still there, the last message is the refusal, the trace names the rule',
    async () => {
      await withFolder(async (cwd, folder) => {
        command = `rm -rf ${folder}`;
        const agent = await newAgent();
        const from = upstream.count();
        const run = await runCodex({ baseUrl: `${gw.url}/v1`, apiKey: agent.key, prompt: 'Delete the keep-me folder.', cwd, timeoutMs: RUN_TIMEOUT_MS });
        expect(run.code, describeRun(run)).toBe(0);
        expect(run.error, describeRun(run)).toBeNull();
        expect(run.lastMessage, describeRun(run)).toContain(REFUSED);
        expect(codexCommands(run.events)).toEqual([]);
        expect(existsSync(join(folder, 'precious-4242.txt'))).toBe(true);
        expect(upstream.toolOutputsFrom(from)).toEqual([]);
        expect(await toolCallsOf(agent.id)).toEqual([
          { id: expect.any(String), name: 'exec_command', decision: 'denied', rule: { policy_id: 'guard', index: 1 }, reason: 'no deletions', approval_id: null, wait_ms: expect.any(Number) },
        ]);
      });
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'an allowed `ls <folder>` runs: its output reaches the model, the trace shows the call allowed',
    async () => {
      await withFolder(async (cwd, folder) => {
        command = `ls ${folder}`;
        const agent = await newAgent();
        const from = upstream.count();
        const run = await runCodex({ baseUrl: `${gw.url}/v1`, apiKey: agent.key, prompt: 'List the keep-me folder.', cwd, timeoutMs: RUN_TIMEOUT_MS });
        expect(run.code, describeRun(run)).toBe(0);
        expect(run.error, describeRun(run)).toBeNull();
        expect(codexCommands(run.events).map((x) => x.aggregated_output)).toEqual([expect.stringContaining('precious-4242.txt')]);
        const outputs = upstream.toolOutputsFrom(from);
        expect(outputs.length, describeRun(run)).toBeGreaterThanOrEqual(1);
        expect(outputs.at(-1)).toContain('precious-4242.txt');
        expect(run.lastMessage).toContain('precious-4242.txt');
        expect(await toolCallsOf(agent.id)).toEqual([
          { id: expect.any(String), name: 'exec_command', decision: 'allowed', rule: null, reason: null, approval_id: null, wait_ms: expect.any(Number) },
        ]);
      });
    },
    TEST_TIMEOUT_MS,
  );
});
