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

// Anthropic's Messages format, for the native /v1/messages path.
const MESSAGE_USAGE = { input_tokens: 24, output_tokens: 7, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
const MESSAGE = Buffer.from(
  JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text: 'word0 word1 word2' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: MESSAGE_USAGE,
  }),
);
const event = (type, o) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
const MESSAGE_EVENTS = [
  event('message_start', { message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { ...MESSAGE_USAGE, output_tokens: 1 } } }),
  event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  ...['word0 ', 'word1 ', 'word2'].map((text) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })),
  event('content_block_stop', { index: 0 }),
  event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } }),
  event('message_stop', {}),
].join('');

const JSON_HEADERS = { 'content-type': 'application/json', 'content-length': COMPLETION.length };
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const messages = req.url.split('?')[0].endsWith('/messages');
    if (req.method !== 'POST' || (!messages && !req.url.endsWith('/chat/completions'))) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not found","type":"invalid_request_error","code":null,"param":null}}');
      return;
    }
    // A cheap look at the body instead of JSON.parse: the mock must cost the same for every target.
    const stream = Buffer.concat(chunks).includes('"stream":true');
    if (messages) {
      if (stream) {
        res.writeHead(200, SSE_HEADERS);
        res.end(MESSAGE_EVENTS);
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': MESSAGE.length });
        res.end(MESSAGE);
      }
      return;
    }
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
