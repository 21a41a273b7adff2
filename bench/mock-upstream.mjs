// A minimal OpenAI-format upstream for the benchmark, run as its own process so it never shares an event loop with the load.
// Paths under /slow/ stream their first chunk at once and the rest after BENCH_SLOW_CHUNK_MS, for the time-to-first-byte run.
import { createServer } from 'node:http';

const SLOW_CHUNK_MS = Number(process.env.BENCH_SLOW_CHUNK_MS ?? 10);

const USAGE = { prompt_tokens: 24, completion_tokens: 7, total_tokens: 31 };
const COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'word0 word1 word2' }, finish_reason: 'stop' }],
    usage: USAGE,
  }),
);

const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-4o-mini' };
const frame = (o) => `data: ${JSON.stringify({ ...base, ...o })}\n\n`;
const FIRST = frame({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
const REST = [
  ...['word0 ', 'word1 ', 'word2'].map((w) => frame({ choices: [{ index: 0, delta: { content: w }, finish_reason: null }] })),
  frame({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
  frame({ choices: [], usage: USAGE }),
  'data: [DONE]\n\n',
].join('');

const JSON_HEADERS = { 'content-type': 'application/json', 'content-length': COMPLETION.length };
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not found","type":"invalid_request_error","code":null,"param":null}}');
      return;
    }
    // A cheap look at the body instead of JSON.parse: the mock must cost the same for every target.
    const stream = Buffer.concat(chunks).includes('"stream":true');
    if (!stream) {
      res.writeHead(200, JSON_HEADERS);
      res.end(COMPLETION);
      return;
    }
    res.writeHead(200, SSE_HEADERS);
    if (req.url.startsWith('/slow/')) {
      res.write(FIRST);
      setTimeout(() => res.end(REST), SLOW_CHUNK_MS);
    } else {
      res.end(FIRST + REST);
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
