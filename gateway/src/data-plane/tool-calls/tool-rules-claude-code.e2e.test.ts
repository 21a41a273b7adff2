// The real Claude Code CLI (headless, offline) through agentgw with a policy denying `Bash` when `command` matches `rm *`,
// on an Anthropic-format upstream (native) and an OpenAI-format upstream (translated): the model's `rm -rf <folder>` never
// reaches Claude Code (the folder is still there, the run ends on agentgw's refusal sentence, the trace lists the denied call
// and its rule); an allowed `ls <folder>` really runs and its output reaches the model's next request.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { type ClaudeCodeRun, runClaudeCode, toolResults } from '../../test-support/claude-code.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { startScriptedAnthropic, textReply, toolUseReply } from '../../test-support/scripted-anthropic.js';
import { chatTextReply, chatToolCallReply, startScriptedOpenAI } from '../../test-support/scripted-openai.js';

const REFUSED = 'agentgw refused the call to Bash: no deletions (policy guard, rule 1)';
const TEST_TIMEOUT_MS = 90_000;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: any) => (typeof b?.text === 'string' ? b.text : '')).join('');
  return '';
}

/** What the model proposes next (the command of its one Bash call). */
let command = '';

interface Upstream {
  url: string;
  /** The request bodies received from index `from` on. */
  bodiesFrom(from: number): any[];
  count(): number;
  /** The text of the tool result a request carries in its last turn, or null. */
  toolOutputOf(body: any): string | null;
  close(): Promise<void>;
}

async function anthropicUpstream(): Promise<Upstream> {
  const raw = await startScriptedAnthropic((body: any) => {
    const results = toolResults(body);
    if (results.length > 0) return textReply(`The command printed: ${textOf(results[0]!.content).trim()}`);
    if (!Array.isArray(body?.tools) || body.tools.length === 0) return textReply('ok');
    return toolUseReply('Bash', { command, description: 'Run it' });
  });
  return {
    url: raw.url,
    count: () => raw.messageRequests.length,
    bodiesFrom: (from) => raw.messageRequests.slice(from).map((r) => r.body),
    toolOutputOf: (body) => {
      const results = toolResults(body);
      return results.length > 0 ? textOf(results[0]!.content) : null;
    },
    close: () => raw.close(),
  };
}

async function openaiUpstream(): Promise<Upstream> {
  const lastTool = (body: any) => {
    const last = Array.isArray(body?.messages) ? body.messages.at(-1) : undefined;
    return last?.role === 'tool' ? textOf(last.content) : null;
  };
  const raw = await startScriptedOpenAI((body: any) => {
    const out = lastTool(body);
    if (out !== null) return chatTextReply(`The command printed: ${out.trim()}`);
    if (!Array.isArray(body?.tools) || body.tools.length === 0) return chatTextReply('ok');
    return chatToolCallReply('Bash', { command, description: 'Run it' });
  });
  return {
    url: raw.url,
    count: () => raw.chatRequests.length,
    bodiesFrom: (from) => raw.chatRequests.slice(from).map((r) => r.body),
    toolOutputOf: lastTool,
    close: () => raw.close(),
  };
}

const CASES = [
  {
    name: 'native (Anthropic-format upstream)',
    start: anthropicUpstream,
    config: (url: string) => ({
      providers: { anthropic: { type: 'anthropic', base_url: url, api_key: 'sk-ant-upstream-secret' } },
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5'] },
    }),
  },
  {
    name: 'translated (OpenAI-format upstream)',
    start: openaiUpstream,
    config: (url: string) => ({
      providers: { openai: { type: 'openai', base_url: url, api_key: 'sk-openai-upstream-secret' } },
      models: { 'claude-*': ['openai/gpt-4o'] },
    }),
  },
];

describe.each(CASES)('Claude Code under a tool rule denying `rm *` in Bash, $name', (c) => {
  let gw: TestGateway;
  let upstream: Upstream;
  let admin: ReturnType<typeof adminClient>;
  let agents = 0;

  beforeAll(async () => {
    upstream = await c.start();
    gw = await startTestGateway({ config: c.config(upstream.url) });
    admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    await admin.policy('guard', { tool_rules: [{ tools: ['Bash'], when: { command: 'rm *' }, action: 'deny', reason: 'no deletions' }] });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  async function newAgent(): Promise<{ id: string; key: string }> {
    agents += 1;
    const agent = await admin.agent('acme', `claude-code-${agents}`, 'guard');
    return { id: agent.id, key: agent.api_key };
  }

  async function traceOf(agentId: string): Promise<any> {
    await gw.runtime.dataPlane.usage.flush();
    const list = await admin.call('GET', `/traces?agent_id=${agentId}`);
    expect(list.data).toHaveLength(1);
    return admin.call('GET', `/traces/${encodeURIComponent(list.data[0].trace_id)}`);
  }

  const describeRun = (run: ClaudeCodeRun) => `exit ${run.code} timedOut ${run.timedOut}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;

  async function withFolder(fn: (cwd: string, folder: string) => Promise<void>): Promise<void> {
    const cwd = await mkdtemp(join(tmpdir(), 'agentgw-cc-rules-'));
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
    'a proposed `rm -rf <folder>` is refused: the folder is still there, the result is the refusal, the trace names the rule',
    async () => {
      await withFolder(async (cwd, folder) => {
        command = `rm -rf ${folder}`;
        const agent = await newAgent();
        const from = upstream.count();
        const run = await runClaudeCode({ baseUrl: gw.url, apiKey: agent.key, prompt: 'Delete the keep-me folder.', cwd });
        expect(run.code, describeRun(run)).toBe(0);
        expect(run.json?.is_error, describeRun(run)).toBe(false);
        expect(run.json!.result).toContain(REFUSED);
        expect(existsSync(join(folder, 'precious-4242.txt'))).toBe(true);
        // Claude Code never ran the command, so no tool result went back to the model.
        expect(upstream.bodiesFrom(from).some((b) => upstream.toolOutputOf(b) !== null)).toBe(false);
        const trace = await traceOf(agent.id);
        const calls = trace.requests.flatMap((s: any) => s.tool_calls);
        expect(calls).toEqual([
          { id: expect.any(String), name: 'Bash', decision: 'denied', rule: { policy_id: 'guard', index: 1 }, reason: 'no deletions', approval_id: null, wait_ms: expect.any(Number) },
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
        const run = await runClaudeCode({ baseUrl: gw.url, apiKey: agent.key, prompt: 'List the keep-me folder.', cwd });
        expect(run.code, describeRun(run)).toBe(0);
        expect(run.json?.is_error, describeRun(run)).toBe(false);
        const outputs = upstream.bodiesFrom(from).map((b) => upstream.toolOutputOf(b)).filter((o) => o !== null);
        expect(outputs).toHaveLength(1);
        expect(outputs[0]).toContain('precious-4242.txt');
        expect(run.json!.result).toContain('The command printed: precious-4242.txt');
        const trace = await traceOf(agent.id);
        expect(trace.requests.flatMap((s: any) => s.tool_calls)).toEqual([
          { id: expect.any(String), name: 'Bash', decision: 'allowed', rule: null, reason: null, approval_id: null, wait_ms: expect.any(Number) },
        ]);
      });
    },
    TEST_TIMEOUT_MS,
  );
});
