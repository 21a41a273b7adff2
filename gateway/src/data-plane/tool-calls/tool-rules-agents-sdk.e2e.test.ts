// The OpenAI Agents SDK (`@openai/agents`, Responses mode) through agentgw with a policy denying its function tool
// `run_shell` when `command` matches `rm *`, native (Responses upstream) and translated (Anthropic-format upstream):
// a proposed `rm -rf` never reaches the tool's execute (the run ends on agentgw's refusal sentence, the trace lists the
// denied call and its rule); an allowed `ls` runs and its output reaches the model's next request.
import { Agent, OpenAIProvider, Runner, tool } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { adminClient } from '../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply, toolUseReply } from '../../test-support/scripted-anthropic.js';
import { type ScriptedResponses, functionCallOutputs, functionCallResponse, startScriptedResponses, textResponse, toolNames } from '../../test-support/scripted-responses.js';

const REFUSED = 'agentgw refused the call to run_shell: no deletions (policy guard, rule 1)';

/** What the model proposes (the command of its one run_shell call). */
let command = '';
let gw: TestGateway;
let oa: ScriptedResponses;
let an: ScriptedAnthropic;
let admin: ReturnType<typeof adminClient>;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: any) => (typeof b?.text === 'string' ? b.text : '')).join('');
  return '';
}

const anthropicResults = (body: any): any[] =>
  (Array.isArray(body?.messages) ? body.messages : []).flatMap((m: any) => (m?.role === 'user' && Array.isArray(m.content) ? m.content.filter((b: any) => b?.type === 'tool_result') : []));

beforeAll(async () => {
  oa = await startScriptedResponses((body: any) => {
    const outputs = functionCallOutputs(body);
    if (outputs.length > 0) return textResponse(`Shell said: ${textOf(outputs.at(-1)!.output)}`);
    if (!toolNames(body).includes('run_shell')) return textResponse('no tools offered');
    return functionCallResponse('run_shell', { command });
  });
  an = await startScriptedAnthropic((body: any) => {
    const results = anthropicResults(body);
    if (results.length > 0) return textReply(`Shell said: ${textOf(results.at(-1).content)}`);
    if (!(Array.isArray(body?.tools) && body.tools.some((t: any) => t?.name === 'run_shell'))) return textReply('no tools offered');
    return toolUseReply('run_shell', { command });
  });
  gw = await startTestGateway({
    config: {
      providers: {
        openai: { type: 'openai', base_url: oa.url, api_key: 'sk-openai-upstream-secret' },
        anthropic: { type: 'anthropic', base_url: an.url, api_key: 'sk-ant-upstream-secret' },
      },
      models: { 'native-model': ['openai/gpt-4.1'], 'claude-model': ['anthropic/claude-sonnet-4-5'] },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('guard', { tool_rules: [{ tools: ['run_shell'], when: { command: 'rm *' }, action: 'deny', reason: 'no deletions' }] });
});
afterAll(async () => {
  await gw?.close();
  await oa?.close();
  await an?.close();
});

/** An agent whose run_shell tool records the commands it was asked to run (and runs none). */
function shellAgent(model: string) {
  const ran: string[] = [];
  const runShell = tool({
    name: 'run_shell',
    description: 'Run a shell command',
    parameters: z.object({ command: z.string() }),
    execute: async ({ command: cmd }) => {
      ran.push(cmd);
      return `listing of ${cmd.slice(3)}: precious-4242.txt`;
    },
  });
  return { agent: new Agent({ name: 'Shell agent', instructions: 'Use run_shell.', tools: [runShell], model }), ran };
}

async function toolCallsOf(traceId: string): Promise<unknown[]> {
  await gw.runtime.dataPlane.usage.flush();
  const trace = await admin.call('GET', `/traces/${encodeURIComponent(traceId)}`);
  return trace.requests.flatMap((s: any) => s.tool_calls);
}

/** The tool outputs the upstream received from index `from` on. */
function toolOutputsFrom(c: (typeof cases)[number], from: number): string[] {
  return c.native
    ? oa.responseRequests.slice(from).flatMap((r) => functionCallOutputs(r.body).map((o) => textOf(o.output)))
    : an.messageRequests.slice(from).flatMap((r) => anthropicResults(r.body).map((b) => textOf(b.content)));
}

const cases = [
  { name: 'native', model: 'native-model', native: true },
  { name: 'translated', model: 'claude-model', native: false },
] as const;

describe.each(cases)('the OpenAI Agents SDK under a tool rule denying `rm *` in run_shell, $name', (c) => {
  async function run(cmd: string, streamed: boolean) {
    command = cmd;
    const key = (await admin.agent('acme', `agents-rules-${c.name}-${cmd.split(' ')[0]}-${streamed}`, 'guard')).api_key;
    const traceId = `agents-rules-${c.name}-${cmd.split(' ')[0]}-${streamed}-${Date.now()}`;
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ baseURL: gw.baseUrl, apiKey: key, useResponses: true }),
      tracingDisabled: true,
      modelSettings: { providerData: { extraHeaders: { 'x-agent-trace-id': traceId } } },
    });
    const { agent, ran } = shellAgent(c.model);
    const from = c.native ? oa.responseRequests.length : an.messageRequests.length;
    let finalOutput: unknown;
    if (streamed) {
      const result = await runner.run(agent, 'Clean up /srv/data.', { stream: true });
      for await (const _ of result) {
        // drain
      }
      await result.completed;
      expect(result.error).toBeNull();
      finalOutput = result.finalOutput;
    } else {
      finalOutput = (await runner.run(agent, 'Clean up /srv/data.')).finalOutput;
    }
    return { finalOutput, ran, traceId, outputs: toolOutputsFrom(c, from) };
  }

  for (const streamed of [false, true]) {
    test(`a proposed \`rm -rf\` is refused${streamed ? ' (streamed)' : ''}: execute never runs, the run ends on the refusal, the trace names the rule`, async () => {
      const r = await run('rm -rf /srv/data', streamed);
      expect(r.ran).toEqual([]);
      expect(r.outputs).toEqual([]);
      expect(r.finalOutput).toBe(REFUSED);
      expect(await toolCallsOf(r.traceId)).toEqual([
        { id: expect.any(String), name: 'run_shell', decision: 'denied', rule: { policy_id: 'guard', index: 1 }, reason: 'no deletions', approval_id: null, wait_ms: expect.any(Number) },
      ]);
    });
  }

  test('an allowed `ls` runs: its output reaches the model, the trace shows the call allowed', async () => {
    const r = await run('ls /srv/data', false);
    expect(r.ran).toEqual(['ls /srv/data']);
    expect(r.outputs).toEqual(['listing of /srv/data: precious-4242.txt']);
    expect(r.finalOutput).toBe('Shell said: listing of /srv/data: precious-4242.txt');
    expect(await toolCallsOf(r.traceId)).toEqual([
      { id: expect.any(String), name: 'run_shell', decision: 'allowed', rule: null, reason: null, approval_id: null, wait_ms: expect.any(Number) },
    ]);
  });
});
