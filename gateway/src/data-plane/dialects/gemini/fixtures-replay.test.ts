// Recorded Gemini payloads replayed through the gateway: requests Gemini CLI sent (native: the upstream receives them as
// sent; translated: an Anthropic-format upstream receives their conversation), Gemini answers with thoughts, function
// calls and safety blocks (native: passed on as sent, streamed as SSE or as a JSON array; billed from usageMetadata),
// and tool rules on functionCall parts (native and translated, streamed and not).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedGemini, startScriptedGemini } from '../../../test-support/scripted-gemini.js';
import { type ScriptedOpenAI, startScriptedOpenAI } from '../../../test-support/scripted-openai.js';

const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');
const json = (name: string) => JSON.parse(fixture(name));
const events = (sse: string) => sse.split('\n\n').filter((f) => f.startsWith('data:')).map((f) => JSON.parse(f.slice(5)));

const CLI = ['cli-router-generate-content', 'cli-turn-1-stream', 'cli-turn-2-stream', 'cli-turn-3-stream'].map((n) => json(`${n}.request.json`));
const REFUSED = 'agentgw refused the call to run_shell_command: no deletions (policy guard, rule 1)';

let gw: TestGateway;
let google: ScriptedGemini;
let anthropic: ScriptedAnthropic;
let openai: ScriptedOpenAI;
let key: string;
let guarded: string;
let admin: ReturnType<typeof adminClient>;

beforeAll(async () => {
  // The answer is named by the model of the path: gemini-thoughts, gemini-calls, gemini-blocked, gemini-safety-stream...
  google = await startScriptedGemini((req) => {
    switch (req.model) {
      case 'gemini-calls':
        return req.call === 'streamGenerateContent' ? { sse: fixture('stream-thoughts-function-call.sse') } : json('generate-content-function-call.json');
      case 'gemini-blocked':
        return json('generate-content-prompt-blocked.json');
      case 'gemini-safety':
        return { sse: fixture('stream-safety-stop.sse') };
      default:
        return json('generate-content-thoughts.json');
    }
  });
  anthropic = await startScriptedAnthropic((body) => {
    if (JSON.stringify(body.messages.at(-1)).includes('clean')) {
      return {
        content: [
          { type: 'text', text: 'Writing, then cleaning.' },
          { type: 'tool_use', id: 'toolu_w', name: 'write_file', input: { file_path: 'note.txt', content: 'hi' } },
          { type: 'tool_use', id: 'toolu_rm', name: 'run_shell_command', input: { command: 'rm -rf build' } },
        ],
        stop_reason: 'tool_use',
      };
    }
    return { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn', usage: { input_tokens: 50, output_tokens: 2 } };
  });
  openai = await startScriptedOpenAI(() => ({ content: 'I cannot', finish_reason: 'content_filter' }));
  gw = await startTestGateway({
    config: {
      providers: {
        google: { type: 'gemini', base_url: google.url, api_key: 'goog-up' },
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-up' },
        openai: { type: 'openai', base_url: openai.url, api_key: 'sk-up' },
      },
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5'], 'gemini-3.1-pro-preview': ['google/gemini-calls'] },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'replay')).api_key;
  await admin.policy('guard', { tenant_id: 'acme', tool_rules: [{ tools: ['run_shell_command'], when: { command: 'rm *' }, action: 'deny', reason: 'no deletions' }] });
  guarded = (await admin.agent('acme', 'guarded', 'guard')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await google?.close();
  await anthropic?.close();
  await openai?.close();
});

function post(model: string, method: string, body: unknown, opts: { key?: string; query?: string; trace?: string } = {}) {
  return fetch(`${gw.url}/v1beta/models/${model}:${method}${opts.query ?? ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': opts.key ?? key, ...(opts.trace ? { 'x-agent-trace-id': opts.trace } : {}) },
    body: JSON.stringify(body),
  });
}

async function step(trace: string): Promise<any> {
  for (let i = 0; i < 50; i++) {
    const t = await admin.call('GET', `/traces/${trace}`).catch(() => null);
    if (t?.requests?.[0] && t.requests[0].status !== 'running') return t.requests[0];
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no step in trace ${trace}`);
}

describe("Gemini CLI's recorded requests", () => {
  test('native: the upstream receives each body exactly as Gemini CLI sent it', async () => {
    for (const [i, rec] of CLI.entries()) {
      const before = google.requests.length;
      const stream = rec.url.includes('streamGenerateContent');
      const res = await post('google/gemini-thoughts', stream ? 'streamGenerateContent' : 'generateContent', rec.body, { query: stream ? '?alt=sse' : '' });
      expect(res.status, `request ${i}`).toBe(200);
      await res.text();
      expect(google.requests.length).toBe(before + 1);
      expect(google.requests.at(-1)!.body).toEqual(rec.body);
    }
  });

  test('translated: an Anthropic-format upstream receives the system prompt, the 15 tools and the calls paired with their responses', async () => {
    const rec = CLI[3];
    const res = await post('claude-sonnet', 'streamGenerateContent', rec.body, { query: '?alt=sse' });
    expect(res.status).toBe(200);
    const got = events(await res.text());
    expect(got.at(-1).candidates[0].finishReason).toBe('STOP');
    const sent = anthropic.messageRequests.at(-1)!.body;
    // Gemini CLI's long system prompt is cached automatically: one block, marked for the prompt cache.
    expect(sent.system).toEqual([{ type: 'text', text: expect.stringContaining('You are Gemini CLI'), cache_control: { type: 'ephemeral' } }]);
    expect(sent.tools).toHaveLength(15);
    expect(sent.tools.map((t: any) => t.name)).toContain('write_file');
    const uses = sent.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === 'tool_use');
    const results = sent.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === 'tool_result');
    const ids = rec.body.contents.flatMap((c: any) => c.parts).filter((p: any) => p.functionCall).map((p: any) => p.functionCall.id);
    expect(ids).toHaveLength(2);
    expect(uses.map((u: any) => u.id)).toEqual(ids);
    expect(results.map((r: any) => r.tool_use_id)).toEqual(ids);
    // topK and thinkingConfig are hints left out; temperature and top_p are carried.
    expect(sent.temperature).toBe(1);
    expect(sent.top_k).toBeUndefined();
  });
});

describe('recorded Gemini answers, native', () => {
  test('a thought, a signed text part and cached tokens pass as sent and are billed from usageMetadata', async () => {
    const res = await post('google/gemini-thoughts', 'generateContent', { contents: [{ role: 'user', parts: [{ text: 'capital of France?' }] }] }, { trace: 'replay-thoughts' });
    expect(await res.json()).toEqual(json('generate-content-thoughts.json'));
    expect(await step('replay-thoughts')).toMatchObject({ endpoint: 'gemini', prompt_tokens: 1210, completion_tokens: 52, cached_tokens: 1024, reasoning_tokens: 44 });
  });

  test('a prompt blocked for safety passes as sent, billed for its prompt', async () => {
    const res = await post('google/gemini-blocked', 'generateContent', { contents: [{ parts: [{ text: 'something bad' }] }] }, { trace: 'replay-blocked' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(json('generate-content-prompt-blocked.json'));
    expect(await step('replay-blocked')).toMatchObject({ prompt_tokens: 14, completion_tokens: 0 });
  });

  test('streams: the events as sent (alt=sse), or the same responses as one JSON array without alt=sse', async () => {
    const sse = await post('google/gemini-safety', 'streamGenerateContent', { contents: [{ parts: [{ text: 'how to' }] }] }, { query: '?alt=sse', trace: 'replay-safety' });
    expect(sse.headers.get('content-type')).toContain('text/event-stream');
    const want = events(fixture('stream-safety-stop.sse'));
    expect(events(await sse.text())).toEqual(want);
    expect(await step('replay-safety')).toMatchObject({ prompt_tokens: 20, completion_tokens: 3, stream: true });
    const array = await post('google/gemini-calls', 'streamGenerateContent', { contents: [{ parts: [{ text: 'write it' }] }] });
    expect(array.headers.get('content-type')).toContain('application/json');
    expect(JSON.parse(await array.text())).toEqual(events(fixture('stream-thoughts-function-call.sse')));
  });
});

describe('recorded Gemini answers, translated', () => {
  test("a chat upstream's content_filter finish is Gemini's SAFETY, streamed and not", async () => {
    const res = await post('openai/gpt-4o-mini', 'generateContent', { contents: [{ parts: [{ text: 'how to' }] }] });
    const body = (await res.json()) as any;
    expect(body.candidates[0]).toMatchObject({ finishReason: 'SAFETY', content: { role: 'model', parts: [{ text: 'I cannot' }] } });
    const streamed = events(await (await post('openai/gpt-4o-mini', 'streamGenerateContent', { contents: [{ parts: [{ text: 'how to' }] }] }, { query: '?alt=sse' })).text());
    expect(streamed.at(-1).candidates[0].finishReason).toBe('SAFETY');
    expect(streamed.map((e) => e.candidates[0].content.parts.map((p: any) => p.text ?? '').join('')).join('')).toBe('I cannot');
  });
});

describe('recorded Gemini answers, translated for a Chat Completions client', () => {
  const chat = (model: string, stream = false) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'go' }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }),
    });

  test('thoughts stay out of the content; thought and cached tokens are reported', async () => {
    const body = (await (await chat('google/gemini-thoughts')).json()) as any;
    expect(body.choices[0].message.content).toBe('The capital of France is Paris.');
    expect(body.usage).toMatchObject({ prompt_tokens: 1210, completion_tokens: 52, prompt_tokens_details: { cached_tokens: 1024 }, completion_tokens_details: { reasoning_tokens: 44 } });
  });

  test('a blocked prompt and a safety stop end with content_filter; calls come as tool_calls, streamed', async () => {
    const blocked = (await (await chat('google/gemini-blocked')).json()) as any;
    expect(blocked.choices[0].finish_reason).toBe('content_filter');
    const safety = await (await chat('google/gemini-safety', true)).text();
    expect(safety).toContain('"finish_reason":"content_filter"');
    const calls = await (await chat('google/gemini-calls', true)).text();
    const names = [...calls.matchAll(/"name":"([a-z_]+)"/g)].map((m) => m[1]);
    expect(names).toEqual(['write_file', 'run_shell_command']);
    expect(calls).toContain('"finish_reason":"tool_calls"');
  });
});

describe('tool rules on functionCall parts', () => {
  const ask = { contents: [{ role: 'user', parts: [{ text: 'write the note, then clean' }] }] };

  test('native, not streamed: the denied call becomes the refusal, the allowed call stays, the step lists both', async () => {
    const res = await post('google/gemini-calls', 'generateContent', ask, { key: guarded, trace: 'rules-native' });
    const body = (await res.json()) as any;
    const parts = body.candidates[0].content.parts;
    expect(parts[1].functionCall).toMatchObject({ name: 'write_file' });
    expect(parts[1].thoughtSignature).toBeDefined();
    expect(parts[2]).toEqual({ text: REFUSED });
    const s = await step('rules-native');
    expect(s.tool_calls.map((c: any) => [c.name, c.decision])).toEqual([
      ['write_file', 'allowed'],
      ['run_shell_command', 'denied'],
    ]);
  });

  test('native, streamed (SSE and JSON array): the event with the calls leaves decided', async () => {
    const sse = events(await (await post('gemini-3.1-pro-preview', 'streamGenerateContent', ask, { key: guarded, query: '?alt=sse' })).text());
    const last = sse.at(-1).candidates[0].content.parts;
    expect(last.map((p: any) => p.functionCall?.name ?? p.text)).toEqual(['write_file', REFUSED]);
    const array = JSON.parse(await (await post('gemini-3.1-pro-preview', 'streamGenerateContent', ask, { key: guarded })).text());
    expect(JSON.stringify(array)).not.toContain('rm -rf');
    expect(JSON.stringify(array)).toContain(REFUSED);
  });

  test('translated from an Anthropic-format upstream, streamed and not', async () => {
    const res = (await (await post('claude-sonnet', 'generateContent', ask, { key: guarded, trace: 'rules-translated' })).json()) as any;
    const parts = res.candidates[0].content.parts;
    expect(parts.map((p: any) => p.functionCall?.name ?? p.text)).toEqual(['Writing, then cleaning.', 'write_file', REFUSED]);
    expect((await step('rules-translated')).tool_calls).toHaveLength(2);
    const sse = await (await post('claude-sonnet', 'streamGenerateContent', ask, { key: guarded, query: '?alt=sse' })).text();
    expect(sse).not.toContain('rm -rf');
    const got = events(sse);
    expect(got.at(-1).candidates[0].content.parts.map((p: any) => p.functionCall?.name ?? p.text)).toEqual(['write_file', REFUSED]);
  });

  test('a function denied outright is not offered to the model', async () => {
    await admin.policy('no-shell', { tenant_id: 'acme', tool_rules: [{ tools: ['run_shell_command'], action: 'deny' }] });
    const k = (await admin.agent('acme', 'no-shell', 'no-shell')).api_key;
    const before = google.requests.length;
    await (await post('google/gemini-thoughts', 'generateContent', CLI[1].body, { key: k })).text();
    expect(google.requests.length).toBe(before + 1);
    const names = google.requests.at(-1)!.body.tools[0].functionDeclarations.map((d: any) => d.name);
    expect(names).toHaveLength(14);
    expect(names).not.toContain('run_shell_command');
  });

  test('tools Google runs itself, denied outright, are not turned on (each by its name, every one under *)', async () => {
    const builtins = [
      { codeExecution: {} },
      { url_context: {} },
      { computerUse: { environment: 'ENVIRONMENT_BROWSER' } },
      { googleSearch: {} },
      { fileSearch: { fileSearchStoreNames: ['fileSearchStores/other-team'] } },
      { googleMaps: {} },
      { mcpServers: [{ name: 'evil', streamableHttpTransport: { url: 'https://mcp.example/evil' } }, { name: 'docs', streamableHttpTransport: { url: 'https://mcp.example/docs' } }] },
    ];
    const body = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], tools: [{ functionDeclarations: [{ name: 'write_file' }] }, ...builtins] };
    const sent = async (policy: string, rules: unknown[]) => {
      await admin.policy(policy, { tenant_id: 'acme', tool_rules: rules });
      const k = (await admin.agent('acme', policy, policy)).api_key;
      const res = await post('google/gemini-thoughts', 'generateContent', body, { key: k });
      expect(res.status, await res.text()).toBe(200);
      return google.requests.at(-1)!.body.tools;
    };
    expect(await sent('no-builtins', [{ tools: ['code_execution', 'web_fetch', 'computer', 'web_search', 'file_search', 'google_maps', 'mcp/evil/*'], action: 'deny' }])).toEqual([
      { functionDeclarations: [{ name: 'write_file' }] },
      { mcpServers: [{ name: 'docs', streamableHttpTransport: { url: 'https://mcp.example/docs' } }] },
    ]);
    expect(await sent('no-tools', [{ tools: ['*'], action: 'deny' }])).toBeUndefined();
    // A rule with `when` may allow some calls: nothing is left out.
    expect(await sent('some-exec', [{ tools: ['code_execution'], when: { code: 'rm *' }, action: 'deny' }])).toEqual(body.tools);
  });
});
