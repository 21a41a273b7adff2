// A minimal upstream for the benchmark (OpenAI Chat Completions, Anthropic Messages, OpenAI Responses), run as its own
// process so it never shares an event loop with the load.
// Paths under /slow/ stream their first chunk at once and the rest after BENCH_SLOW_CHUNK_MS, for the time-to-first-byte run;
// paths under /slow-text/ (every format) send everything up to the end of the first text event at once and the rest
// BENCH_SLOW_CHUNK_MS later, for the time to the first text byte. /tool-call/.../messages answers with a Bash tool call.
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

// OpenAI's Responses format, for the native /v1/responses path: the same three words as one message item, streamed as
// OpenAI streams it (created, in_progress, item and part added, 3 text deltas, text/part/item done, completed). As
// OpenAI does, the response object echoes the request's tools (in created, in_progress and completed), the bulk of its
// echo of the request: for Codex's 10 tools about 14 KB each time, which a gateway passing the stream on must carry.
const RESPONSE_USAGE = { input_tokens: 24, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 31 };
const responseObject = (o) => ({
  id: 'resp_bench',
  object: 'response',
  created_at: 1_700_000_000,
  status: 'completed',
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  model: 'gpt-5.5',
  output: [],
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: 'medium', summary: null },
  store: false,
  temperature: 1,
  text: { format: { type: 'text' }, verbosity: 'low' },
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  truncation: 'disabled',
  usage: null,
  user: null,
  metadata: {},
  ...o,
});
const OUTPUT_TEXT = { type: 'output_text', text: 'word0 word1 word2', annotations: [], logprobs: [] };
// An item id of its own, so the bench can tell the gateway's native path (item passed on) from a translated one.
const OUTPUT_MESSAGE = { id: 'msg_bench_responses', type: 'message', status: 'completed', role: 'assistant', content: [OUTPUT_TEXT] };
const NO_TOOLS = '"tools":[]';
/** The answer split where the request's tools go: parts.join(`"tools":[...]`). */
const RESPONSE = JSON.stringify(responseObject({ output: [OUTPUT_MESSAGE], usage: RESPONSE_USAGE })).split(NO_TOOLS);
const RESPONSE_EVENTS = (() => {
  const item = { item_id: OUTPUT_MESSAGE.id, output_index: 0 };
  const part = { ...item, content_index: 0 };
  const events = [
    ['response.created', { response: responseObject({ status: 'in_progress' }) }],
    ['response.in_progress', { response: responseObject({ status: 'in_progress' }) }],
    ['response.output_item.added', { output_index: 0, item: { ...OUTPUT_MESSAGE, status: 'in_progress', content: [] } }],
    ['response.content_part.added', { ...part, part: { ...OUTPUT_TEXT, text: '' } }],
    ...['word0 ', 'word1 ', 'word2'].map((delta) => ['response.output_text.delta', { ...part, delta, logprobs: [] }]),
    ['response.output_text.done', { ...part, text: OUTPUT_TEXT.text, logprobs: [] }],
    ['response.content_part.done', { ...part, part: OUTPUT_TEXT }],
    ['response.output_item.done', { output_index: 0, item: OUTPUT_MESSAGE }],
    ['response.completed', { response: responseObject({ output: [OUTPUT_MESSAGE], usage: RESPONSE_USAGE }) }],
  ];
  return events.map(([type, o], i) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: i, ...o })}\n\n`).join('').split(NO_TOOLS);
})();

/** The request's tools as the answer echoes them (the same work whichever target forwarded the request). */
function echoedTools(body) {
  try {
    const tools = JSON.parse(body).tools;
    return Array.isArray(tools) ? `"tools":${JSON.stringify(tools)}` : NO_TOOLS;
  } catch {
    return NO_TOOLS;
  }
}

// A proposed call a tool rule of the bench denies (BENCH_TOOL_RULES=compare proves its rules are live with it).
const TOOL_CALL_MESSAGE = Buffer.from(
  JSON.stringify({
    id: 'msg_bench_tool',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'tool_use', id: 'toolu_bench', name: 'Bash', input: { command: 'rm -rf /tmp/bench-project', description: 'Clean up' } }],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: MESSAGE_USAGE,
  }),
);

/** A stream whose first text event arrives at once and the rest BENCH_SLOW_CHUNK_MS later (paths under /slow-text/). */
function endSlowText(res, text) {
  const word = text.indexOf('word0');
  const cut = word === -1 ? text.length : text.indexOf('\n\n', word) + 2;
  res.write(text.slice(0, cut));
  setTimeout(() => res.end(text.slice(cut)), SLOW_CHUNK_MS);
}

const JSON_HEADERS = { 'content-type': 'application/json', 'content-length': COMPLETION.length };
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const path = req.url.split('?')[0];
    const messages = path.endsWith('/messages');
    const responses = path.endsWith('/responses');
    if (req.method !== 'POST' || (!messages && !responses && !path.endsWith('/chat/completions'))) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not found","type":"invalid_request_error","code":null,"param":null}}');
      return;
    }
    // A cheap look at the body instead of JSON.parse: the mock must cost the same for every target.
    const body = Buffer.concat(chunks);
    const stream = body.includes('"stream":true');
    const slowText = stream && req.url.startsWith('/slow-text/');
    if (messages) {
      if (stream) {
        res.writeHead(200, SSE_HEADERS);
        if (slowText) endSlowText(res, MESSAGE_EVENTS);
        else res.end(MESSAGE_EVENTS);
      } else if (req.url.startsWith('/tool-call/')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': TOOL_CALL_MESSAGE.length });
        res.end(TOOL_CALL_MESSAGE);
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': MESSAGE.length });
        res.end(MESSAGE);
      }
      return;
    }
    if (responses) {
      const tools = echoedTools(body.toString());
      if (stream) {
        res.writeHead(200, SSE_HEADERS);
        if (slowText) endSlowText(res, RESPONSE_EVENTS.join(tools));
        else res.end(RESPONSE_EVENTS.join(tools));
      } else {
        const answer = Buffer.from(RESPONSE.join(tools));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
        res.end(answer);
      }
      return;
    }
    if (!stream) {
      res.writeHead(200, JSON_HEADERS);
      res.end(COMPLETION);
      return;
    }
    res.writeHead(200, SSE_HEADERS);
    if (slowText) {
      endSlowText(res, FIRST + REST);
    } else if (req.url.startsWith('/slow/')) {
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
