// Web searches the provider runs itself are billed per search (Anthropic and OpenAI: USD 10 per 1,000): priced into
// the request's cost from the usage the provider reports, and into the worst case a reservation or cost cap holds.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { anthropicPromptUsage, mergeAnthropicPromptCounts } from '../providers/anthropic/convert-anthropic-usage.js';
import { fromResponse } from '../providers/openai/openai-responses-usage.js';
import { UNBOUNDED_WEB_SEARCHES, webSearchesUpperBound } from '../policy/web-search-bound.js';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply } from '../test-support/scripted-anthropic.js';
import { type ScriptedResponses, startScriptedResponses, textResponse } from '../test-support/scripted-responses.js';
import { costOf, webSearchCost } from './cost.js';
import { PriceTable, WEB_SEARCH_USD } from './prices.js';

const SONNET = { input: 3, output: 15 };

describe('the cost of web searches', () => {
  test('each search costs web_search_per_call, USD 0.01 unless the price says otherwise', () => {
    expect(WEB_SEARCH_USD).toBe(0.01);
    expect(costOf(SONNET, { prompt_tokens: 1000, completion_tokens: 100, web_search_calls: 3 })).toBeCloseTo((1000 * 3 + 100 * 15) / 1e6 + 0.03, 10);
    expect(costOf(SONNET, { prompt_tokens: 1000, completion_tokens: 100 })).toBeCloseTo((1000 * 3 + 100 * 15) / 1e6, 10);
    expect(costOf({ ...SONNET, web_search_per_call: 0.025 }, { prompt_tokens: 0, completion_tokens: 0, web_search_calls: 4 })).toBe(0.1);
    expect(webSearchCost(SONNET, -1)).toBe(0);
    expect(webSearchCost(SONNET, Number.NaN)).toBe(0);
  });

  test('prices in the server config may set it', () => {
    const table = new PriceTable({ 'gemini/gemini-2.5-pro': { input: 1.25, output: 10, web_search_per_call: 0.035 }, 'claude-sonnet-4-5': { input: 3, output: 15 } });
    expect(table.lookup('gemini', 'gemini-2.5-pro')?.web_search_per_call).toBe(0.035);
    expect(table.lookup('gemini', 'gemini-2.5-pro-preview')?.web_search_per_call).toBe(0.035);
    expect(table.lookup('anthropic', 'claude-sonnet-4-5')?.web_search_per_call).toBeUndefined();
  });

  test("Anthropic's usage.server_tool_use.web_search_requests is read, and kept across a stream's events", () => {
    expect(anthropicPromptUsage({ input_tokens: 10, output_tokens: 5, server_tool_use: { web_search_requests: 2 } })).toMatchObject({ web_search_calls: 2 });
    expect(anthropicPromptUsage({ input_tokens: 10, output_tokens: 5 }).web_search_calls).toBeUndefined();
    const start = mergeAnthropicPromptCounts({}, { input_tokens: 10, server_tool_use: { web_search_requests: 0 } });
    const delta = mergeAnthropicPromptCounts(start, { output_tokens: 50, server_tool_use: { web_search_requests: 3 } });
    expect(anthropicPromptUsage(delta).web_search_calls).toBe(3);
    expect(anthropicPromptUsage(mergeAnthropicPromptCounts(delta, { output_tokens: 60 })).web_search_calls).toBe(3);
  });

  test("OpenAI's web_search_call output items are counted", () => {
    const output = [
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'a' } },
      { type: 'web_search_call', id: 'ws_2', status: 'completed', action: { type: 'open_page', url: 'https://example.org' } },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'x' }] },
    ];
    expect(fromResponse({ usage: { input_tokens: 5, output_tokens: 1 }, output })).toEqual({ prompt_tokens: 5, completion_tokens: 1, web_search_calls: 2 });
    expect(fromResponse({ usage: { input_tokens: 5, output_tokens: 1 }, output: [] }).web_search_calls).toBeUndefined();
  });
});

describe('the most web searches a request allows', () => {
  const search = { type: 'web_search_20250305', name: 'web_search' };
  test.each([
    ['messages', { tools: [{ ...search, max_uses: 8 }] }, 8],
    ['messages', { tools: [search] }, UNBOUNDED_WEB_SEARCHES],
    ['messages', { tools: [{ ...search, max_uses: 2 }, { type: 'web_search_20260209', name: 'web_search_2', max_uses: 3 }] }, 5],
    ['messages', { tools: [{ name: 'web_search', input_schema: {} }, { type: 'web_fetch_20250910', name: 'web_fetch' }] }, 0],
    ['messages', { tools: 'nonsense' }, 0],
    ['responses', { tools: [{ type: 'web_search' }] }, UNBOUNDED_WEB_SEARCHES],
    ['responses', { tools: [{ type: 'web_search_preview_2025_03_11' }], max_tool_calls: 3 }, 3],
    ['responses', { tools: [{ type: 'function', name: 'web_search' }] }, 0],
    ['chat.completions', { web_search_options: {} }, UNBOUNDED_WEB_SEARCHES],
    ['chat.completions', { tools: [] }, 0],
    ['embeddings', { input: 'x' }, 0],
  ] as const)('%s %j: %d', (endpoint, body, n) => {
    expect(webSearchesUpperBound(endpoint, body as Record<string, unknown>)).toBe(n);
  });
});

describe('web searches through the gateway', () => {
  let anthropic: ScriptedAnthropic;
  let responsesUpstream: ScriptedResponses;
  let gw: TestGateway;
  let admin: ReturnType<typeof adminClient>;
  let key: string;
  let cappedKey: string;
  let n = 0;

  beforeAll(async () => {
    anthropic = await startScriptedAnthropic(() => textReply('searched', { input_tokens: 1000, output_tokens: 100, server_tool_use: { web_search_requests: 3 } }));
    responsesUpstream = await startScriptedResponses(() => ({
      ...textResponse('searched', { input_tokens: 1000, output_tokens: 100 }),
      output: [
        { type: 'web_search_call', raw: { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'agentgw' } } },
        { type: 'web_search_call', raw: { type: 'web_search_call', id: 'ws_2', status: 'completed', action: { type: 'search', query: 'agentgw docs' } } },
        { type: 'message', text: 'searched' },
      ],
    }));
    gw = await startTestGateway({
      config: {
        providers: {
          anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream' },
          oairesp: { type: 'openai', base_url: responsesUpstream.url, api_key: 'sk-upstream' },
        },
        prices: { 'anthropic/claude-sonnet-4-5': SONNET, 'oairesp/gpt-4.1': { input: 2, output: 8 } },
      },
    });
    admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    key = (await admin.agent('acme', 'open')).api_key;
    await admin.policy('capped', { tenant_id: 'acme', rules: { max_cost_per_request: 0.05 } });
    cappedKey = (await admin.agent('acme', 'capped', 'capped')).api_key;
  });
  afterAll(async () => {
    await gw?.close();
    await anthropic?.close();
    await responsesUpstream?.close();
  });

  async function post(path: string, k: string, body: Record<string, unknown>) {
    const traceId = `ws-${++n}`;
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json', 'x-agent-trace-id': traceId },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text(), traceId };
  }

  async function costOfTrace(traceId: string): Promise<number> {
    await gw.runtime.dataPlane.usage.flush();
    const trace = await admin.call('GET', `/traces/${traceId}`);
    expect(trace.requests).toHaveLength(1);
    return trace.requests[0].cost;
  }

  const claudeCodeSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 8 };
  const messages = (extra: Record<string, unknown> = {}) => ({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'search' }], ...extra });

  test.each([false, true])('messages (stream %s): three searches Anthropic reports are billed with the tokens', async (stream) => {
    const r = await post('/v1/messages', key, messages({ tools: [claudeCodeSearch], stream }));
    expect(r.status, r.text).toBe(200);
    expect(await costOfTrace(r.traceId)).toBeCloseTo((1000 * 3 + 100 * 15) / 1e6 + 0.03, 9);
  });

  test('chat completions translated to Anthropic: the searches of web_search_options are billed too', async () => {
    const r = await post('/v1/chat/completions', key, { model: 'anthropic/claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'search' }], web_search_options: {} });
    expect(r.status, r.text).toBe(200);
    expect(await costOfTrace(r.traceId)).toBeCloseTo((1000 * 3 + 100 * 15) / 1e6 + 0.03, 9);
  });

  test.each([false, true])('native responses (stream %s): each web_search_call is billed', async (stream) => {
    const r = await post('/v1/responses', key, { model: 'oairesp/gpt-4.1', input: 'search', max_output_tokens: 16, tools: [{ type: 'web_search' }], stream });
    expect(r.status, r.text).toBe(200);
    expect(await costOfTrace(r.traceId)).toBeCloseTo((1000 * 2 + 100 * 8) / 1e6 + 0.02, 9);
  });

  test("the worst case holds every search a request allows: Claude Code's 8 pass a $0.05 cap no more", async () => {
    const before = anthropic.messageRequests.length;
    const refused = await post('/v1/messages', cappedKey, messages({ tools: [claudeCodeSearch] }));
    expect(refused.status, refused.text).toBe(403);
    expect(JSON.parse(refused.text).error.code).toBe('cost_cap_exceeded');
    expect(anthropic.messageRequests.length).toBe(before);
    expect((await post('/v1/messages', cappedKey, messages({ tools: [{ ...claudeCodeSearch, max_uses: 2 }] }))).status).toBe(200);
    expect((await post('/v1/messages', cappedKey, messages())).status).toBe(200);
  });

  test('a web search without a limit is reserved as UNBOUNDED_WEB_SEARCHES searches', async () => {
    const responses = { model: 'oairesp/gpt-4.1', input: 'search', max_output_tokens: 16, tools: [{ type: 'web_search' }] };
    expect((await post('/v1/responses', cappedKey, responses)).status).toBe(403);
    expect((await post('/v1/responses', cappedKey, { ...responses, max_tool_calls: 3 })).status).toBe(200);
    const chat = { model: 'anthropic/claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'search' }] };
    expect((await post('/v1/chat/completions', cappedKey, { ...chat, web_search_options: {} })).status).toBe(403);
    expect((await post('/v1/chat/completions', cappedKey, chat)).status).toBe(200);
  });
});
