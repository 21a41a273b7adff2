// End to end: a request whose prompt the provider partly wrote to its prompt cache is billed at the cache-write rate.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FakeUpstream, fixtureReader } from '../providers/__fixtures__/fake-upstream.js';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { BUILTIN_PRICES } from './prices.js';

const anthropicFixtures = fixtureReader(new URL('../providers/anthropic/x', import.meta.url).href);
const bedrockFixtures = fixtureReader(new URL('../providers/bedrock/x', import.meta.url).href);

const ONE_HOUR_PROMPT = 'When does the contract renew? (cached for an hour)';

let upstream: FakeUpstream;
let gw: TestGateway;
let admin: ReturnType<typeof adminClient>;
let key: string;

beforeAll(async () => {
  upstream = await FakeUpstream.start();
  // Plays Anthropic's Messages API and Bedrock's Converse API from recorded payloads whose prompts wrote to the cache;
  // a prompt that asks for the 1-hour cache gets payloads of writes mostly to the 1-hour cache.
  upstream.respond((req, res) => {
    const oneHour = JSON.stringify(req.json().messages).includes(ONE_HOUR_PROMPT);
    if (req.url === '/v1/messages' && req.json().stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(anthropicFixtures.text(oneHour ? 'message-stream-cache-write-1h.sse' : 'message-stream-cache-write.sse'));
    } else if (req.url === '/v1/messages') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(anthropicFixtures.text(oneHour ? 'message-cache-write-1h.json' : 'message-cache-write.json'));
    } else if (req.url.endsWith('/converse')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(bedrockFixtures.text(oneHour ? 'converse-cache-write-1h.json' : 'converse-cache-write.json'));
    } else {
      res.writeHead(404).end();
    }
  });
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: { type: 'anthropic', base_url: `${upstream.url}/v1`, api_key: 'sk-ant-test' },
        bedrock: { type: 'bedrock', base_url: upstream.url, region: 'us-east-1', access_key_id: 'AKIDEXAMPLE0TEST', secret_access_key: 'secret-example' },
      },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'cached-bot')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.stop();
});

async function chat(traceId: string, body: Record<string, unknown>) {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-trace-id': traceId },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'When does the contract renew?' }], ...body }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return text;
}

/** The usage object of a stream's usage chunk, as the client receives it. */
function streamedUsage(text: string) {
  return text
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: {'))
    .map((frame) => JSON.parse(frame.slice(6)))
    .find((chunk) => chunk.usage)?.usage;
}

async function recorded(traceId: string) {
  for (let i = 0; i < 50; i++) {
    await gw.runtime.dataPlane.usage.flush();
    const r = await fetch(`${gw.adminUrl}/traces/${traceId}`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
    if (r.status === 200) return ((await r.json()) as { requests: any[] }).requests[0];
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no usage recorded for trace ${traceId}`);
}

// Every fixture: input_tokens 21 (uncached), 2048 read from the cache, 1873 written to it, 9 output tokens.
const sonnet = BUILTIN_PRICES['claude-sonnet-4-5'];
const expectedCost = (21 * sonnet.input + 2048 * sonnet.cached_input! + 1873 * sonnet.cache_write_input! + 9 * sonnet.output) / 1e6;

describe('prompt cache writes are billed at the cache-write rate', () => {
  test('the expected cost is uncached x input + reads x cached_input + writes x cache_write_input + output x output', () => {
    // 21 x 3 + 2048 x 0.3 + 1873 x 3.75 + 9 x 15 = 7836.15 micro-USD; a cache write billed as plain input would make it 6431.4.
    expect(expectedCost).toBeCloseTo(0.00783615, 12);
  });

  test('Anthropic, not streamed', async () => {
    const body = JSON.parse(await chat('cache-write-anthropic', { model: 'anthropic/claude-sonnet-4-5' }));
    // The client sees OpenAI's usage object: cache writes are part of prompt_tokens, with no field of their own.
    expect(body.usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
    const rec = await recorded('cache-write-anthropic');
    expect(rec).toMatchObject({ prompt_tokens: 3942, completion_tokens: 9 });
    expect(rec.cost).toBeCloseTo(expectedCost, 12);
  });

  test('Anthropic, streamed', async () => {
    const text = await chat('cache-write-anthropic-stream', { model: 'anthropic/claude-sonnet-4-5', stream: true, stream_options: { include_usage: true } });
    expect(streamedUsage(text)).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
    const rec = await recorded('cache-write-anthropic-stream');
    expect(rec).toMatchObject({ stream: true, prompt_tokens: 3942, completion_tokens: 9 });
    expect(rec.cost).toBeCloseTo(expectedCost, 12);
  });

  test('Bedrock Converse, Claude priced as on Anthropic', async () => {
    await chat('cache-write-bedrock', { model: 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0' });
    const rec = await recorded('cache-write-bedrock');
    expect(rec).toMatchObject({ prompt_tokens: 3942, completion_tokens: 9 });
    expect(rec.cost).toBeCloseTo(expectedCost, 12);
  });
});

// The 1-hour fixtures: as above, but of the 1873 tokens written, 349 went to the 5-minute cache and 1524 to the 1-hour one.
const expectedCost1h =
  (21 * sonnet.input + 2048 * sonnet.cached_input! + 349 * sonnet.cache_write_input! + 1524 * sonnet.cache_write_1h_input! + 9 * sonnet.output) / 1e6;

describe('1-hour prompt cache writes are billed at the 1-hour cache-write rate', () => {
  const oneHour = { messages: [{ role: 'user', content: ONE_HOUR_PROMPT }] };

  test('the expected cost bills 1-hour writes at cache_write_1h_input (2x input), the others at cache_write_input', () => {
    // 21 x 3 + 2048 x 0.3 + 349 x 3.75 + 1524 x 6 + 9 x 15 = 11265.15 micro-USD; every write at the 5-minute rate would make it 7836.15.
    expect(expectedCost1h).toBeCloseTo(0.01126515, 12);
  });

  test('Anthropic, not streamed', async () => {
    const body = JSON.parse(await chat('cache-write-1h-anthropic', { model: 'anthropic/claude-sonnet-4-5', ...oneHour }));
    // The client's usage object is unchanged: 1-hour writes are part of prompt_tokens, with no field of their own.
    expect(body.usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
    const rec = await recorded('cache-write-1h-anthropic');
    expect(rec).toMatchObject({ prompt_tokens: 3942, completion_tokens: 9 });
    expect(rec.cost).toBeCloseTo(expectedCost1h, 12);
  });

  test('Anthropic, streamed', async () => {
    const text = await chat('cache-write-1h-anthropic-stream', {
      model: 'anthropic/claude-sonnet-4-5',
      stream: true,
      stream_options: { include_usage: true },
      ...oneHour,
    });
    expect(streamedUsage(text)).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
    const rec = await recorded('cache-write-1h-anthropic-stream');
    expect(rec).toMatchObject({ stream: true, prompt_tokens: 3942, completion_tokens: 9 });
    expect(rec.cost).toBeCloseTo(expectedCost1h, 12);
  });

  test('Bedrock Converse (usage.cacheDetails), Claude priced as on Anthropic', async () => {
    const body = JSON.parse(await chat('cache-write-1h-bedrock', { model: 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0', ...oneHour }));
    expect(body.usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
    const rec = await recorded('cache-write-1h-bedrock');
    expect(rec).toMatchObject({ prompt_tokens: 3942, completion_tokens: 9 });
    expect(rec.cost).toBeCloseTo(expectedCost1h, 12);
  });
});
