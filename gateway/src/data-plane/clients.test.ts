import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TraceRequest } from '../contract/index.js';
import { adminClient } from '../test-support/admin.js';
import type { TraceDetail } from '../test-support/admin-api.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

let gw: TestGateway;
let upstream: FakeOpenAI;
let admin: ReturnType<typeof adminClient>;
let key: string;
let agentId: string;

beforeAll(async () => {
  upstream = await startFakeOpenAI();
  gw = await startTestGateway({ config: { providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk' } } } });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  const agent = await admin.agent('acme', 'bot');
  key = agent.api_key;
  agentId = agent.id;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** The upstream sends its first chunk at once and holds the rest until the returned function is called. */
function holdAfterFirstChunk(): () => void {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let calls = 0;
  upstream.options.gate = async () => {
    if (calls++ > 0) await held;
  };
  return release;
}

const price = (prompt: number, completion: number) => (prompt * 0.15 + completion * 0.6) / 1e6;

async function lastTraceRequest(traceId: string) {
  await gw.runtime.dataPlane.usage.flush();
  const t = await admin.call('GET', `/traces/${encodeURIComponent(traceId)}`);
  return t.requests.at(-1);
}

describe('other real clients', () => {
  test('Vercel AI SDK: generateText and streamText', async () => {
    const provider = createOpenAICompatible({ name: 'agentgw', baseURL: gw.baseUrl, apiKey: key, includeUsage: true, headers: { 'X-Agent-Trace-Id': 'vercel' } });
    const g = await generateText({ model: provider('openai/gpt-4o-mini'), prompt: 'Say hi' });
    expect(g.text).toBe('word0 word1 word2');
    expect(g.usage.outputTokens).toBe(7);
    const s = streamText({ model: provider('openai/gpt-4o-mini'), prompt: 'Stream hi' });
    let text = '';
    for await (const part of s.textStream) text += part;
    expect(text).toBe('word0 word1 word2 ');
    expect((await s.usage).outputTokens).toBe(7);
  });

  test('LangChain ChatOpenAI: invoke and stream', async () => {
    const llm = new ChatOpenAI({ model: 'openai/gpt-4o-mini', apiKey: key, configuration: { baseURL: gw.baseUrl }, maxRetries: 0 });
    const msg = await llm.invoke('Say hi');
    expect(msg.content).toBe('word0 word1 word2');
    let text = '';
    for await (const chunk of await llm.stream('Stream hi')) text += chunk.content;
    expect(text).toBe('word0 word1 word2 ');
  });
});

describe('streaming and cost', () => {
  test('the first chunk reaches the client before the upstream finishes', async () => {
    // The first word goes out at once; the rest wait until the client has seen a chunk.
    const release = holdAfterFirstChunk();
    try {
      const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl });
      const stream = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'x' }] });
      const seen: string[] = [];
      for await (const chunk of stream) {
        const c = chunk.choices[0]?.delta?.content;
        if (c) seen.push(c);
        if (c === 'word0 ') release();
      }
      expect(seen).toEqual(['word0 ', 'word1 ', 'word2 ']);
    } finally {
      upstream.options.gate = undefined;
      release();
    }
  });

  test('recorded cost equals tokens x price, streamed and not', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl, defaultHeaders: { 'X-Agent-Trace-Id': 'cost-check' } });
    const plain = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'how much?' }] });
    let rec = await lastTraceRequest('cost-check');
    expect(rec.prompt_tokens).toBe(plain.usage!.prompt_tokens);
    expect(rec.cost).toBeCloseTo(price(plain.usage!.prompt_tokens, plain.usage!.completion_tokens), 12);

    // Without include_usage the client sees no usage chunk, but the gateway still asks upstream for it and bills it.
    const stream = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'how much, streamed?' }] });
    for await (const chunk of stream) expect(chunk.usage ?? null).toBeNull();
    expect(upstream.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    rec = await lastTraceRequest('cost-check');
    const promptTokens = Math.ceil(JSON.stringify([{ role: 'user', content: 'how much, streamed?' }]).length / 4);
    expect(rec).toMatchObject({ stream: true, prompt_tokens: promptTokens, completion_tokens: 7 });
    expect(rec.cost).toBeCloseTo(price(promptTokens, 7), 12);
    expect(rec.ttft_ms).toBeGreaterThan(0);
  });

  test('a client that disconnects mid-stream aborts the upstream call and is billed for what was streamed', async () => {
    const release = holdAfterFirstChunk();
    upstream.options.chunks = 50;
    try {
      const ac = new AbortController();
      const res = await fetch(`${gw.baseUrl}/chat/completions`, {
        method: 'POST',
        signal: ac.signal,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-trace-id': 'disconnect' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'long story' }] }),
      });
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes('word0')) text += new TextDecoder().decode((await reader.read()).value);
      ac.abort();
      let rec: TraceRequest | undefined;
      for (let i = 0; i < 100 && !rec; i++) {
        await new Promise((r) => setTimeout(r, 20));
        await gw.runtime.dataPlane.usage.flush();
        const r = await fetch(`${gw.adminUrl}/traces/disconnect`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
        if (r.status === 200) rec = ((await r.json()) as TraceDetail).requests[0];
      }
      release();
      // The upstream saw its client go away: its request was aborted, not completed.
      expect(rec!.completion_tokens).toBeGreaterThan(0);
      expect(rec!.completion_tokens).toBeLessThan(50);
      expect(rec!.cost).toBeGreaterThan(0);
      const spend = (await admin.call('GET', `/agents/${agentId}`)).spend;
      expect(spend.day).toBeGreaterThan(0);
    } finally {
      upstream.options.gate = undefined;
      upstream.options.chunks = undefined;
      release();
    }
  });
});
