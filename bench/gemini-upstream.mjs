// The upstream of bench/gemini-dialect.mjs, in its own process: a Chat Completions answer on /v1/chat/completions and the
// same answer in Gemini's format on /v1beta/models/{model}:generateContent, both of the same size and usage.
import { createServer } from 'node:http';

const COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'word0 word1 word2' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 24, completion_tokens: 7, total_tokens: 31 },
  }),
);
const GEMINI = Buffer.from(
  JSON.stringify({
    candidates: [{ content: { role: 'model', parts: [{ text: 'word0 word1 word2' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 24, candidatesTokenCount: 7, totalTokenCount: 31 },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'bench',
  }),
);

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const body = req.url.startsWith('/v1beta/') ? GEMINI : COMPLETION;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
