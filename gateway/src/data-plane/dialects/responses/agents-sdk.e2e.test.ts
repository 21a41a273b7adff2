// The OpenAI Agents SDK (`@openai/agents`) in its default Responses mode against agentgw's /v1/responses: a triage agent
// hands off to an agent with a function tool; native to a (scripted) OpenAI Responses upstream and translated to a
// (scripted) Anthropic Messages upstream; run() and { stream: true }; every model call a step of one trace. The SDK's
// server-managed conversation (previousResponseId) runs on agentgw's stored responses.
import { Agent, OpenAIProvider, Runner, tool } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply, toolUseReply } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedResponses, functionCallResponse, inputItems, startScriptedResponses, textResponse, toolNames } from '../../../test-support/scripted-responses.js';
import { schemaCheckingFetch } from './__fixtures__/open-responses-schema.js';

const TIMEOUT_MS = 60_000;
const AGENTGW_ID = /^resp_[0-9a-f]{48}$/;
const TRANSFER = 'transfer_to_Weather_agent';

let gw: TestGateway;
let oa: ScriptedResponses;
let an: ScriptedAnthropic;
let admin: ReturnType<typeof adminClient>;

/** Native script: the triage agent hands off; the weather agent calls get_weather, then answers with its result. */
function nativeScript(body: any) {
  const items = inputItems(body);
  const tools = toolNames(body);
  if (tools.includes(TRANSFER)) return functionCallResponse(TRANSFER, {});
  if (tools.includes('get_weather')) {
    const call = items.find((i: any) => i?.type === 'function_call' && i.name === 'get_weather');
    const output = call ? items.find((i: any) => i?.type === 'function_call_output' && i.call_id === call.call_id) : undefined;
    if (output) return textResponse(`Native says: ${String(output.output)}`);
    return functionCallResponse('get_weather', { city: 'Paris' });
  }
  return textResponse('no tools offered');
}

/** The same conversation on Anthropic's side: tool_use blocks in assistant turns, tool_result blocks in user turns. */
function anthropicScript(body: any) {
  const names = (Array.isArray(body?.tools) ? body.tools : []).map((t: any) => t?.name);
  const blocks = (Array.isArray(body?.messages) ? body.messages : []).flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
  if (names.includes(TRANSFER)) return toolUseReply(TRANSFER, {});
  if (names.includes('get_weather')) {
    const use = blocks.find((b: any) => b?.type === 'tool_use' && b.name === 'get_weather');
    const result = use ? blocks.find((b: any) => b?.type === 'tool_result' && b.tool_use_id === use.id) : undefined;
    if (result) {
      const text = typeof result.content === 'string' ? result.content : (result.content as any[]).map((p) => p?.text ?? '').join('');
      return textReply(`Anthropic says: ${text}`);
    }
    return toolUseReply('get_weather', { city: 'Paris' });
  }
  return textReply('no tools offered');
}

beforeAll(async () => {
  oa = await startScriptedResponses(nativeScript, { chunkSize: 6 });
  an = await startScriptedAnthropic(anthropicScript, { chunkSize: 6 });
  gw = await startTestGateway({
    config: {
      providers: {
        openai: { type: 'openai', base_url: oa.url, api_key: 'sk-openai-upstream-secret' },
        anthropic: { type: 'anthropic', base_url: an.url, api_key: 'sk-ant-upstream-secret' },
      },
      // The agents ask for these names; agentgw routes them.
      models: { 'native-model': ['openai/gpt-4.1'], 'claude-model': ['anthropic/claude-sonnet-4-5'] },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
});
afterAll(async () => {
  await gw?.close();
  await oa?.close();
  await an?.close();
});

/** A triage agent with a handoff to a weather agent whose function tool records its calls. */
function agents(model: string) {
  const calls: string[] = [];
  const getWeather = tool({
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return `Sunny, 21C in ${city}`;
    },
  });
  const weather = new Agent({ name: 'Weather agent', instructions: 'Answer weather questions with get_weather.', tools: [getWeather], model });
  const triage = new Agent({ name: 'Triage agent', instructions: 'Hand weather questions over to the weather agent.', handoffs: [weather], model });
  return { triage, weather, calls };
}

type AgentsOpenAIClient = NonNullable<NonNullable<ConstructorParameters<typeof OpenAIProvider>[0]>['openAIClient']>;

const schema = schemaCheckingFetch();
afterEach(async () => {
  expect(await schema.settled()).toEqual([]);
});
afterAll(() => {
  // The check ran: answers were read and validated.
  expect(schema.checked()).toBeGreaterThan(0);
});

/** A runner on agentgw; every model call carries the trace header (the SDK sends no session header of its own). */
function runnerFor(apiKey: string, traceId: string): Runner {
  return new Runner({
    // The SDK's client with a fetch that validates every response object and event against the Open Responses schema.
    // (The Agents SDK depends on its own copy of the openai package: the same client class, typed apart.)
    modelProvider: new OpenAIProvider({ openAIClient: new OpenAI({ baseURL: gw.baseUrl, apiKey, fetch: schema.fetch }) as unknown as AgentsOpenAIClient, useResponses: true }),
    tracingDisabled: true,
    modelSettings: { providerData: { extraHeaders: { 'x-agent-trace-id': traceId } } },
  });
}

async function trace(traceId: string): Promise<any> {
  await gw.runtime.dataPlane.usage.flush();
  return admin.call('GET', `/traces/${encodeURIComponent(traceId)}`);
}

const cases = [
  { name: 'native', model: 'native-model', provider: 'openai', target: 'openai/gpt-4.1', answer: 'Native says: Sunny, 21C in Paris' },
  { name: 'translated', model: 'claude-model', provider: 'anthropic', target: 'anthropic/claude-sonnet-4-5', answer: 'Anthropic says: Sunny, 21C in Paris' },
] as const;

describe('the OpenAI Agents SDK through agentgw (Responses mode)', () => {
  for (const c of cases) {
    for (const streamed of [false, true]) {
      test(
        `${c.name}${streamed ? ', { stream: true }' : ''}: triage hands off, the weather agent runs its tool, one trace`,
        async () => {
          const agent = await admin.agent('acme', `agents-${c.name}-${streamed ? 'stream' : 'run'}`);
          const traceId = `agents-${c.name}-${streamed ? 'stream' : 'run'}-${Date.now()}`;
          const { triage, calls } = agents(c.model);
          const runner = runnerFor(agent.api_key, traceId);
          const oaFrom = oa.responseRequests.length;
          const anFrom = an.messageRequests.length;
          let finalOutput: unknown;
          let lastAgent: string | undefined;
          let lastResponseId: string | undefined;
          const textDeltas: string[] = [];
          if (streamed) {
            const result = await runner.run(triage, 'What is the weather in Paris?', { stream: true });
            for await (const e of result) {
              if (e.type === 'raw_model_stream_event' && e.data.type === 'output_text_delta') textDeltas.push(e.data.delta);
            }
            await result.completed;
            expect(result.error).toBeNull();
            finalOutput = result.finalOutput;
            lastAgent = result.lastAgent?.name;
            lastResponseId = result.lastResponseId;
          } else {
            const result = await runner.run(triage, 'What is the weather in Paris?');
            finalOutput = result.finalOutput;
            lastAgent = result.lastAgent?.name;
            lastResponseId = result.lastResponseId;
          }
          expect(finalOutput).toBe(c.answer);
          expect(lastAgent).toBe('Weather agent');
          expect(calls).toEqual(['Paris']);
          if (streamed) expect(textDeltas.join('')).toBe(c.answer);
          expect(lastResponseId).toMatch(AGENTGW_ID);

          // Three model calls: the handoff, the tool call, the answer; all on the expected upstream.
          if (c.provider === 'openai') {
            const sent = oa.responseRequests.slice(oaFrom);
            expect(an.messageRequests.length).toBe(anFrom);
            expect(sent).toHaveLength(3);
            expect(sent.map((r) => r.body.model)).toEqual(['gpt-4.1', 'gpt-4.1', 'gpt-4.1']);
            expect(sent.map((r) => r.body.stream === true)).toEqual([streamed, streamed, streamed]);
            expect(toolNames(sent[0]!.body)).toEqual([TRANSFER]);
            expect(toolNames(sent[2]!.body)).toEqual(['get_weather']);
            expect(sent[2]!.body.instructions).toBe('Answer weather questions with get_weather.');
          } else {
            const sent = an.messageRequests.slice(anFrom);
            expect(oa.responseRequests.length).toBe(oaFrom);
            expect(sent).toHaveLength(3);
            expect(sent.map((r) => r.body.model)).toEqual(['claude-sonnet-4-5', 'claude-sonnet-4-5', 'claude-sonnet-4-5']);
            expect(sent.map((r) => r.body.stream === true)).toEqual([streamed, streamed, streamed]);
            expect(sent[0]!.body.tools.map((t: any) => t.name)).toEqual([TRANSFER]);
            // The last call carries both tool round trips as tool_use / tool_result pairs.
            const msgs = sent[2]!.body.messages as any[];
            expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
            expect(msgs[1].content.find((b: any) => b.type === 'tool_use')).toMatchObject({ name: TRANSFER });
            expect(msgs[2].content.find((b: any) => b.type === 'tool_result')).toMatchObject({ tool_use_id: msgs[1].content.find((b: any) => b.type === 'tool_use').id });
            expect(msgs[3].content.find((b: any) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
            expect(JSON.stringify(msgs[4].content)).toContain('Sunny, 21C in Paris');
            expect(JSON.stringify(sent[2]!.body.system)).toContain('Answer weather questions with get_weather.');
          }

          const t = await trace(traceId);
          expect(t.agent_id).toBe(agent.id);
          expect(t.requests.map((s: any) => [s.endpoint, s.http_status, s.status, s.provider, s.model, s.stream])).toEqual(
            Array.from({ length: 3 }, () => ['responses', 200, 'ok', c.provider, c.target, streamed]),
          );
          for (const s of t.requests) expect(s.response_id).toMatch(AGENTGW_ID);
          expect(t.requests.at(-1).response_id).toBe(lastResponseId);
        },
        TIMEOUT_MS,
      );
    }

    test(
      `${c.name}: a second run continues the first with previousResponseId (agentgw keeps the conversation)`,
      async () => {
        const agent = await admin.agent('acme', `agents-${c.name}-continued`);
        const traceId = `agents-${c.name}-continued-${Date.now()}`;
        const { triage, weather, calls } = agents(c.model);
        const runner = runnerFor(agent.api_key, traceId);
        const first = await runner.run(triage, 'What is the weather in Paris?');
        expect(first.finalOutput).toBe(c.answer);
        const oaFrom = oa.responseRequests.length;
        const anFrom = an.messageRequests.length;
        // Straight to the weather agent, on the server-side conversation: the SDK sends only the new input.
        const second = await runner.run(weather, 'And tomorrow?', { previousResponseId: first.lastResponseId });
        expect(second.finalOutput).toBe(c.answer);
        expect(calls).toEqual(['Paris']);
        const seen = c.provider === 'openai' ? oa.responseRequests.slice(oaFrom).map((r) => r.body) : an.messageRequests.slice(anFrom).map((r) => r.body);
        expect(seen).toHaveLength(1);
        // The upstream received the whole first run and the new question, and no previous_response_id.
        const text = JSON.stringify(c.provider === 'openai' ? inputItems(seen[0]) : seen[0].messages);
        expect(text).toContain('What is the weather in Paris?');
        expect(text).toContain('Sunny, 21C in Paris');
        expect(text).toContain(c.answer);
        expect(text).toContain('And tomorrow?');
        expect(seen[0].previous_response_id).toBeUndefined();
        const t = await trace(traceId);
        expect(t.requests).toHaveLength(4);
      },
      TIMEOUT_MS,
    );
  }
});
