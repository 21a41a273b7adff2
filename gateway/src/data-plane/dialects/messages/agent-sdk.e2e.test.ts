// The Claude Agent SDK's query() through agentgw's /v1/messages: a tool round trip on an Anthropic-format upstream
// (native; an in-process MCP tool the SDK runs) and on an OpenAI-format upstream (translated; the Bash tool).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSdkMcpServer, tool } from '@anthropic-ai/claude-agent-sdk';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { adminClient } from '../../../test-support/admin.js';
import { type AgentSdkRun, runAgentSdkQuery } from '../../../test-support/claude-agent-sdk.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { toolResults } from '../../../test-support/claude-code.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply, toolUseReply } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedOpenAI, chatToolResults, chatToolSequenceScript, startScriptedOpenAI } from '../../../test-support/scripted-openai.js';

const TIMEOUT_MS = 90_000;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: any) => (typeof b?.text === 'string' ? b.text : '')).join('');
  return '';
}

function describeRun(run: AgentSdkRun): string {
  return `timedOut ${run.timedOut} error ${String(run.error)}\nresult: ${JSON.stringify(run.result)?.slice(0, 1500)}\nstderr: ${run.stderr.slice(0, 1500)}`;
}

let gw: TestGateway;
let anthropic: ScriptedAnthropic;
let openai: ScriptedOpenAI;
let admin: ReturnType<typeof adminClient>;
const calls: Array<{ a: number; b: number }> = [];

beforeAll(async () => {
  // Native: call the in-process MCP tool, then answer with what it returned.
  anthropic = await startScriptedAnthropic((body) => {
    const results = toolResults(body);
    if (results.length > 0) return textReply(`The sum is ${textOf(results[0]!.content)}.`);
    const offered = Array.isArray(body?.tools) && body.tools.length > 0;
    return offered ? toolUseReply('mcp__calc__add', { a: 20, b: 22 }) : textReply('no tools offered');
  });
  // Translated: Bash, then the command's output.
  openai = await startScriptedOpenAI(
    chatToolSequenceScript([{ name: 'Bash', args: { command: 'echo sdk-translated-ok', description: 'echo' } }], (body) => `Bash said ${textOf(chatToolResults(body)[0]?.content).trim()}`),
  );
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-secret' },
        openai: { type: 'openai', base_url: openai.url, api_key: 'sk-openai-upstream-secret' },
      },
      // The SDK asks for a claude-* model; `gpt-via-*` is what the translated test asks for (--model).
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5'], 'gpt-via-*': ['openai/gpt-4o'] },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
  await openai?.close();
});

async function traceSteps(agentId: string): Promise<any> {
  await gw.runtime.dataPlane.usage.flush();
  const list = await admin.call('GET', `/traces?agent_id=${agentId}`);
  expect(list.data).toHaveLength(1);
  return admin.call('GET', `/traces/${encodeURIComponent(list.data[0].trace_id)}`);
}

describe('the Claude Agent SDK through agentgw', () => {
  test(
    'native: query() runs an in-process MCP tool the model called and finishes with its result, in one trace',
    async () => {
      const agent = await admin.agent('acme', 'sdk-native');
      const calc = createSdkMcpServer({
        name: 'calc',
        version: '1.0.0',
        tools: [
          tool('add', 'Adds two integers', { a: z.number(), b: z.number() }, async ({ a, b }) => {
            calls.push({ a, b });
            return { content: [{ type: 'text', text: String(a + b) }] };
          }),
        ],
      });
      const cwd = await mkdtemp(join(tmpdir(), 'agentgw-sdk-'));
      const from = anthropic.messageRequests.length;
      const t0 = performance.now();
      try {
        const run = await runAgentSdkQuery({ baseUrl: gw.url, apiKey: agent.api_key, prompt: 'Add 20 and 22 with the calc tool.', cwd, mcpServers: { calc } });
        const ms = Math.round(performance.now() - t0);
        expect(run.error, describeRun(run)).toBeNull();
        expect(run.result, describeRun(run)).not.toBeNull();
        expect(run.result!.subtype, describeRun(run)).toBe('success');
        expect(run.result!.is_error).toBe(false);
        expect(run.result!.subtype === 'success' ? run.result!.result : null).toBe('The sum is 42.');
        expect(calls).toEqual([{ a: 20, b: 22 }]);
        const sent = anthropic.messageRequests.slice(from);
        expect(sent).toHaveLength(2);
        for (const r of sent) {
          expect(r.path).toBe('/v1/messages?beta=true');
          expect(r.body.model).toBe('claude-sonnet-4-5');
          expect(r.headers['x-api-key']).toBe('sk-ant-upstream-secret');
          expect(r.headers['anthropic-version']).toBe('2023-06-01');
          expect(String(r.headers['anthropic-beta'])).toContain('claude-code-20250219');
        }
        const trace = await traceSteps(agent.id);
        expect(trace.trace_id).toBe(run.result!.session_id);
        expect(trace.requests.map((s: any) => [s.endpoint, s.http_status, s.provider])).toEqual([
          ['messages', 200, 'anthropic'],
          ['messages', 200, 'anthropic'],
        ]);
        console.info(`[agent-sdk native] ${ms} ms`);
      } finally {
        await rm(cwd, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );

  test(
    'translated: query() with a Bash round trip on an OpenAI-format upstream',
    async () => {
      const agent = await admin.agent('acme', 'sdk-translated');
      const cwd = await mkdtemp(join(tmpdir(), 'agentgw-sdk-'));
      const from = openai.chatRequests.length;
      const t0 = performance.now();
      try {
        const run = await runAgentSdkQuery({ baseUrl: gw.url, apiKey: agent.api_key, prompt: 'Run echo sdk-translated-ok.', cwd, model: 'gpt-via-gateway' });
        const ms = Math.round(performance.now() - t0);
        expect(run.error, describeRun(run)).toBeNull();
        expect(run.result?.subtype, describeRun(run)).toBe('success');
        expect(run.result!.subtype === 'success' ? run.result!.result : null).toBe('Bash said sdk-translated-ok');
        const sent = openai.chatRequests.slice(from);
        expect(sent).toHaveLength(2);
        expect(sent[1]!.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: expect.any(String) });
        const trace = await traceSteps(agent.id);
        expect(trace.requests.map((s: any) => [s.endpoint, s.http_status, s.provider, s.model])).toEqual([
          ['messages', 200, 'openai', 'openai/gpt-4o'],
          ['messages', 200, 'openai', 'openai/gpt-4o'],
        ]);
        console.info(`[agent-sdk translated] ${ms} ms`);
      } finally {
        await rm(cwd, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );
});
