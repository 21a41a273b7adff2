// The real Claude Code CLI (headless, offline) through agentgw on an alias of an Anthropic-format target and an
// OpenAI-format fallback: the Anthropic target answers the first turn with signed thinking and a tool call, then fails
// (500) mid-conversation; the run completes on the fallback, which receives no thinking signature.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { runClaudeCode } from '../../../test-support/claude-code.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedAnthropic, errorReply, startScriptedAnthropic } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedOpenAI, chatTextReply, startScriptedOpenAI } from '../../../test-support/scripted-openai.js';

const SIGNATURE = 'EqQBCkgIBhABGAIiQFallbackTestSignature0123456789';

/** Whether the conversation's last user message answers a tool call. */
const answersTool = (body: any) => {
  const last = body.messages?.at(-1);
  return Array.isArray(last?.content) && last.content.some((b: any) => b?.type === 'tool_result');
};

let anthropic: ScriptedAnthropic;
let openai: ScriptedOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startScriptedAnthropic((body) =>
    answersTool(body)
      ? errorReply(500, 'Internal server error')
      : {
          content: [
            { type: 'thinking', thinking: 'The user wants me to run echo; I will use Bash.', signature: SIGNATURE },
            { type: 'text', text: 'Running it.' },
            { type: 'tool_use', id: 'toolu_01FallbackBash', name: 'Bash', input: { command: 'echo fallback-ok', description: 'Echo' } },
          ],
          stop_reason: 'tool_use',
        },
  );
  openai = await startScriptedOpenAI(() => chatTextReply('It printed fallback-ok.'));
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-secret' },
        openai: { type: 'openai', base_url: openai.url, api_key: 'sk-openai-upstream-secret' },
      },
      // Claude Code asks for the model it is told to use, and the Anthropic target answers as that model (Claude Code
      // sends thinking back only to the model that signed it).
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5', 'openai/gpt-4o'] },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
  await openai?.close();
});

test('Claude Code completes on the OpenAI-format fallback after the Anthropic target fails mid-conversation; the fallback gets no thinking signature', async () => {
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  const agent = await admin.agent('acme', 'claude-code-fallback');
  const run = await runClaudeCode({ baseUrl: gw.url, apiKey: agent.api_key, prompt: 'Run echo fallback-ok and tell me what it printed.', model: 'claude-sonnet-4-5', timeoutMs: 60_000 });
  const described = `exit ${run.code}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;
  expect(run.json, described).not.toBeNull();
  expect(run.json!.is_error, described).toBe(false);
  expect(run.json!.result).toBe('It printed fallback-ok.');
  // Claude Code sent the signed thinking back, as it must to Anthropic: the Anthropic target got it, then failed.
  const sentBack = anthropic.messageRequests.filter((r) => answersTool(r.body));
  expect(sentBack.length).toBeGreaterThan(0);
  expect(sentBack[0]!.raw).toContain(SIGNATURE);
  // The fallback received the conversation (the tool call and its output) without the thinking or its signature.
  expect(openai.chatRequests.length).toBeGreaterThan(0);
  for (const r of openai.chatRequests) {
    expect(r.raw).not.toContain('signature');
    expect(r.raw).not.toContain(SIGNATURE);
    expect(r.raw).not.toContain('cache_control');
  }
  const last = openai.chatRequests.at(-1)!.body;
  expect(last.messages.some((m: any) => m.role === 'tool' && String(m.content).includes('fallback-ok'))).toBe(true);
  await gw.runtime.dataPlane.usage.flush();
  const list = await admin.call('GET', `/traces?agent_id=${agent.id}`);
  const trace = await admin.call('GET', `/traces/${encodeURIComponent(list.data[0].trace_id)}`);
  const fallbackStep = trace.requests.find((s: any) => s.provider === 'openai');
  expect(fallbackStep).toMatchObject({ status: 'ok', model: 'openai/gpt-4o' });
  expect(fallbackStep.cleaned).toContain('thinking_signatures');
}, 90_000);
