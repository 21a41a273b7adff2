import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
  /** The body's text as received. */
  raw: string;
}

export interface FakeOpenAIOptions {
  /** Tokens the fake reports: prompt from the request's text length / 4, completion fixed. */
  completionTokens?: number;
  /** Words streamed per reply. */
  chunks?: number;
  /** Answer every request with this status and an OpenAI error body. */
  failWith?: number;
  /** Hold each stream chunk until this resolves (to prove pass-through). */
  gate?: () => Promise<void>;
  /** Wait this long before answering each request. */
  delayMs?: number;
  /** Report this usage object instead of the counted one (an upstream that reports nonsense). */
  usage?: Record<string, unknown>;
}

export interface FakeOpenAI {
  url: string;
  requests: ReceivedRequest[];
  options: FakeOpenAIOptions;
  close(): Promise<void>;
}

function promptTokens(body: any): number {
  const text = JSON.stringify(body.messages ?? body.input ?? '');
  return Math.max(1, Math.ceil(text.length / 4));
}

/** A local server speaking OpenAI's wire format (chat, streamed chat with a usage chunk, embeddings, errors). */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const requests: ReceivedRequest[] = [];
  const state: FakeOpenAI = { url: '', requests, options, close: async () => undefined };
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const body = raw ? JSON.parse(raw) : null;
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, raw });
    const o = state.options;
    if (o.delayMs) await new Promise((r) => setTimeout(r, o.delayMs));
    if (o.failWith) {
      res.writeHead(o.failWith, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake failure ${o.failWith}`, type: 'server_error', code: null, param: null } }));
      return;
    }
    const completion = o.completionTokens ?? 7;
    const prompt = body ? promptTokens(body) : 0;
    const usage = o.usage ?? { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    if (req.url?.endsWith('/embeddings')) {
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: inputs.map((_: unknown, i: number) => ({
            object: 'embedding',
            index: i,
            // OpenAI answers base64 little-endian float32 when asked (the official SDK asks by default).
            embedding: body.encoding_format === 'base64' ? Buffer.from(new Float32Array([0.5, 0.25, 0.125]).buffer).toString('base64') : [0.5, 0.25, 0.125],
          })),
          model: body.model,
          usage: { prompt_tokens: prompt, total_tokens: prompt },
        }),
      );
      return;
    }
    const words = Array.from({ length: o.chunks ?? 3 }, (_, i) => `word${i} `);
    if (body?.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model };
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`);
      for (const w of words) {
        if (o.gate) await o.gate();
        if (res.destroyed) return;
        res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: w }, finish_reason: null }] })}\n\n`);
      }
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      if (body.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-fake',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: words.join('').trim() }, finish_reason: 'stop' }],
        usage,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
