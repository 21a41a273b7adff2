// The real Gemini CLI (0.61.0, headless, offline) through agentgw's Gemini dialect, on a Gemini-format upstream (native)
// and on an Anthropic-format one (translated through Chat Completions): a multi-turn task that writes a file with a tool
// and reads it back runs to completion as one trace (X-Agent-Trace-Id through GEMINI_CLI_CUSTOM_HEADERS: the CLI sends
// no session id of its own); a spent budget stops it with the error it reports; a tool rule denying a shell command
// keeps the command from running.
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { runGeminiCli } from '../../../test-support/gemini-cli.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply, toolUseReply } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedGemini, geminiCalls, geminiText, startScriptedGemini } from '../../../test-support/scripted-gemini.js';

const TEST_TIMEOUT_MS = 120_000;
const CONTENT = 'hello from agentgw\n';
const ROUTE = JSON.stringify({ complexity_reasoning: 'Two linear steps.', complexity_score: 30 });

/** The task's next step, given how many tool results the conversation holds: write, read, answer with what was read. */
function nextStep(results: number, dir: string, lastOutput: string): { call?: { name: string; args: Record<string, unknown> }; text?: string } {
  const file = join(dir, 'note.txt');
  if (results === 0) return { call: { name: 'write_file', args: { file_path: file, content: CONTENT } } };
  if (results === 1) return { call: { name: 'read_file', args: { file_path: file } } };
  return { text: `The file says: ${lastOutput.trim()}` };
}

let gw: TestGateway;
let google: ScriptedGemini;
let anthropic: ScriptedAnthropic;
let admin: ReturnType<typeof adminClient>;
let key: string;
let workDir = '';

beforeAll(async () => {
  google = await startScriptedGemini((req) => {
    if (req.body.generationConfig?.responseMimeType === 'application/json') return geminiText(ROUTE);
    if (JSON.stringify(req.body.contents).includes('Clean up')) return geminiCalls([{ name: 'run_shell_command', args: { command: `rm -rf ${join(workDir, 'keep')}` } }]);
    const responses = req.body.contents.flatMap((c: any) => c.parts ?? []).filter((p: any) => p.functionResponse);
    const out = String(responses.at(-1)?.functionResponse?.response?.output ?? '');
    const step = nextStep(responses.length, workDir, out);
    if (step.call) return geminiCalls([{ name: step.call.name, args: step.call.args }], { promptTokenCount: 1000, candidatesTokenCount: 20, thoughtsTokenCount: 10, totalTokenCount: 1030 });
    return geminiText(step.text!, { promptTokenCount: 1200, candidatesTokenCount: 12, totalTokenCount: 1212 });
  });
  anthropic = await startScriptedAnthropic((body) => {
    if (body.output_config?.format) return textReply(ROUTE);
    const results = body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === 'tool_result');
    const last = results.at(-1);
    const out = last === undefined ? '' : typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
    const step = nextStep(results.length, workDir, out.includes('hello from agentgw') ? CONTENT : out);
    if (step.call) return toolUseReply(step.call.name, step.call.args);
    return textReply(step.text!);
  });
  gw = await startTestGateway({
    config: {
      providers: {
        google: { type: 'gemini', base_url: google.url, api_key: 'goog-up' },
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-up' },
      },
      // Gemini CLI names its own models (a router model, then its main model); aliases send them where the team wants.
      models: { 'gemini-*': ['google/gemini-2.5-pro'], 'claude/gemini-*': ['anthropic/claude-sonnet-4-5'] },
      prices: { 'google/gemini-2.5-pro': { input: 1.25, output: 10 }, 'anthropic/claude-sonnet-4-5': { input: 3, output: 15 } },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'gemini-cli')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await google?.close();
  await anthropic?.close();
});

async function trace(id: string, steps: number): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const t = await admin.call('GET', `/traces/${id}`).catch(() => null);
    if (t && t.requests.length >= steps && t.requests.every((r: any) => r.status !== 'running')) return t;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`trace ${id} not found`);
}

async function inWorkDir<T>(run: (dir: string) => Promise<T>): Promise<T> {
  workDir = await mkdtemp(join(tmpdir(), 'agentgw-gemini-task-'));
  try {
    return await run(workDir);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

describe('Gemini CLI through agentgw', () => {
  test(
    'native: write a file, read it back, answer; one trace of four gemini steps, billed from usageMetadata',
    async () => {
      await inWorkDir(async (dir) => {
        const before = google.requests.length;
        const run = await runGeminiCli({ baseUrl: gw.url, apiKey: key, prompt: 'Write "hello from agentgw" to note.txt, then read it back.', cwd: dir, headers: { 'X-Agent-Trace-Id': 'gemini-cli-native' } });
        expect(run.code, run.stderr.slice(-2000)).toBe(0);
        expect(run.stdout).toContain('The file says: hello from agentgw');
        expect(await readFile(join(dir, 'note.txt'), 'utf8')).toBe(CONTENT);
        const sent = google.requests.slice(before);
        expect(sent.map((r) => r.call)).toEqual(['generateContent', 'streamGenerateContent', 'streamGenerateContent', 'streamGenerateContent']);
        expect(sent.every((r) => r.model === 'gemini-2.5-pro' && r.headers['x-goog-api-key'] === 'goog-up')).toBe(true);
        const t = await trace('gemini-cli-native', 4);
        expect(t.requests).toHaveLength(4);
        expect(t.requests.every((r: any) => r.endpoint === 'gemini' && r.http_status === 200 && r.model === 'google/gemini-2.5-pro')).toBe(true);
        expect(t.requests[1]).toMatchObject({ stream: true, prompt_tokens: 1000, completion_tokens: 30, reasoning_tokens: 10 });
      });
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'translated to an Anthropic-format upstream: the same task completes, one trace',
    async () => {
      await inWorkDir(async (dir) => {
        const before = anthropic.messageRequests.length;
        const run = await runGeminiCli({
          baseUrl: gw.url,
          apiKey: key,
          prompt: 'Write "hello from agentgw" to note.txt, then read it back.',
          cwd: dir,
          args: ['--model', 'claude/gemini-2.5-pro'],
          headers: { 'X-Agent-Trace-Id': 'gemini-cli-translated' },
        });
        expect(run.code, run.stderr.slice(-2000)).toBe(0);
        expect(run.stdout).toContain('The file says: hello from agentgw');
        expect(await readFile(join(dir, 'note.txt'), 'utf8')).toBe(CONTENT);
        const bodies = anthropic.messageRequests.slice(before).map((r) => r.body);
        expect(bodies.length).toBeGreaterThanOrEqual(3);
        const last = bodies.at(-1)!;
        expect(last.tools.map((t: any) => t.name)).toContain('write_file');
        const t = await trace('gemini-cli-translated', bodies.length);
        expect(t.requests.length).toBe(bodies.length);
        expect(t.requests.every((r: any) => r.endpoint === 'gemini' && r.provider === 'anthropic')).toBe(true);
      });
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'a spent budget stops the run with the error it reports',
    async () => {
      await admin.policy('spent', { tenant_id: 'acme', daily_budget: 0 });
      const broke = (await admin.agent('acme', 'gemini-cli-broke', 'spent')).api_key;
      await inWorkDir(async (dir) => {
        const before = google.requests.length;
        const run = await runGeminiCli({ baseUrl: gw.url, apiKey: broke, prompt: 'Write "hello from agentgw" to note.txt.', cwd: dir, headers: { 'X-Agent-Trace-Id': 'gemini-cli-broke' }, timeoutMs: 90_000 });
        expect(run.timedOut).toBe(false);
        expect(run.code).not.toBe(0);
        // The CLI reports agentgw's sentence, and does not retry (RetryInfo: the budget resets in hours).
        expect(run.stdout + run.stderr).toContain('daily budget of $0 is spent');
        expect(existsSync(join(dir, 'note.txt'))).toBe(false);
        expect(google.requests.length).toBe(before);
      });
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'a tool rule denying rm in run_shell_command: the folder survives, the run ends on the refusal, the trace names the rule',
    async () => {
      await admin.policy('no-rm', { tenant_id: 'acme', tool_rules: [{ tools: ['run_shell_command'], when: { command: 'rm *' }, action: 'deny', reason: 'no deletions' }] });
      const guarded = (await admin.agent('acme', 'gemini-cli-guarded', 'no-rm')).api_key;
      await inWorkDir(async (dir) => {
        mkdirSync(join(dir, 'keep'));
        const run = await runGeminiCli({ baseUrl: gw.url, apiKey: guarded, prompt: 'Clean up the keep folder.', cwd: dir, headers: { 'X-Agent-Trace-Id': 'gemini-cli-rules' } });
        expect(run.code, run.stderr.slice(-2000)).toBe(0);
        expect(existsSync(join(dir, 'keep'))).toBe(true);
        expect(run.stdout).toContain('agentgw refused the call to run_shell_command: no deletions (policy no-rm, rule 1)');
        const t = await trace('gemini-cli-rules', 2);
        const decided = t.requests.flatMap((r: any) => r.tool_calls ?? []);
        expect(decided).toEqual([expect.objectContaining({ name: 'run_shell_command', decision: 'denied', rule: { policy_id: 'no-rm', index: 1 } })]);
      });
    },
    TEST_TIMEOUT_MS,
  );
});
