// A local HTTP server that plays an upstream provider from recorded payloads and records what the gateway sent it.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ProviderAdapter } from '../spec.js';

export interface RecordedRequest {
  method: string;
  /** Path with query string, as received. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json(): any;
}

export type Responder = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export class FakeUpstream {
  readonly requests: RecordedRequest[] = [];
  private responder: Responder = (_req, res) => {
    res.writeHead(500).end('no responder set');
  };

  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(): Promise<FakeUpstream> {
    let upstream: FakeUpstream | undefined;
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const body = Buffer.concat(parts);
        const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, json: () => JSON.parse(body.toString('utf8')) };
        upstream!.requests.push(recorded);
        void upstream!.responder(recorded, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    upstream = new FakeUpstream(server, `http://127.0.0.1:${port}`);
    return upstream;
  }

  /** Every following request gets this answer. */
  respond(responder: Responder): void {
    this.responder = responder;
  }

  get last(): RecordedRequest {
    const req = this.requests[this.requests.length - 1];
    if (!req) throw new Error('the fake upstream received no request');
    return req;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): Responder {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
  };
}

/** Writes each piece as its own network write, so parsers meet real chunk boundaries. */
export function streamReply(pieces: Array<string | Buffer>, contentType = 'text/event-stream', headers: Record<string, string> = {}): Responder {
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': contentType, ...headers });
    for (const piece of pieces) {
      res.write(piece);
      await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
  };
}

/**
 * Writes the first piece, then waits for `gate` before writing the rest; `closed` settles when the connection closes,
 * telling whether the response was finished by then.
 */
export function gatedStreamReply(first: string | Buffer, rest: Array<string | Buffer>, gate: Promise<void>, contentType = 'text/event-stream') {
  let settle: (finished: boolean) => void = () => {};
  const closed = new Promise<boolean>((resolve) => (settle = resolve));
  const responder: Responder = async (_req, res) => {
    res.on('close', () => settle(res.writableFinished));
    res.writeHead(200, { 'content-type': contentType });
    res.write(first);
    await gate;
    if (res.destroyed) return;
    for (const piece of rest) res.write(piece);
    res.end();
  };
  return { responder, closed };
}

/** SSE text split into its events (each keeps its blank-line terminator). */
export function sseEventsOf(text: string): string[] {
  return text.split(/(?<=\r?\n\r?\n)/).filter((e) => e.trim() !== '');
}

export function fixtureReader(testFileUrl: string) {
  const dir = join(dirname(fileURLToPath(testFileUrl)), '__fixtures__');
  return {
    text: (name: string) => readFileSync(join(dir, name), 'utf8'),
    json: (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8')),
  };
}

/** Parses the OpenAI frames a ChatStream yielded. */
export function parseFrames(frames: string[]): any[] {
  return frames.map((frame) => {
    if (!frame.startsWith('data: ') || !frame.endsWith('\n\n')) throw new Error(`not an SSE frame: ${JSON.stringify(frame)}`);
    return JSON.parse(frame.slice(6, -2));
  });
}

export function ctx(model: string, extra: { includeUsage?: boolean; signal?: AbortSignal } = {}) {
  return { model, requestId: 'req_test_1', signal: extra.signal ?? new AbortController().signal, ...(extra.includeUsage !== undefined ? { includeUsage: extra.includeUsage } : {}) };
}

/**
 * Plays `first`, holds the rest until the test has read one frame, then plays it: proves the first frame is not held
 * back until the upstream finishes (if it were, the read would wait forever and the test would time out).
 */
export async function firstFrameBeforeUpstreamEnds(
  upstream: FakeUpstream,
  first: string | Buffer,
  rest: Array<string | Buffer>,
  open: () => Promise<AsyncIterable<string>>,
  contentType?: string,
): Promise<{ first: string; upstreamEndedBeforeFirst: boolean; rest: string[]; upstreamFinished: boolean }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const { responder, closed } = gatedStreamReply(first, rest, gate, contentType);
  let ended = false;
  void closed.then(() => (ended = true));
  upstream.respond(responder);
  const iterator = (await open())[Symbol.asyncIterator]();
  const head = await iterator.next();
  const upstreamEndedBeforeFirst = ended;
  release();
  const tail: string[] = [];
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) tail.push(next.value);
  return { first: head.value as string, upstreamEndedBeforeFirst, rest: tail, upstreamFinished: await closed };
}

/** Plays `first` and never finishes; reads `frames` frames, aborts, and reports what the upstream saw. */
export async function abortAfterFrames(
  upstream: FakeUpstream,
  first: string | Buffer,
  frames: number,
  open: (signal: AbortSignal) => Promise<AsyncIterable<string>>,
  contentType?: string,
): Promise<{ received: string[]; endedAfterAbort: boolean; upstreamFinished: boolean }> {
  const { responder, closed } = gatedStreamReply(first, [], new Promise(() => {}), contentType);
  upstream.respond(responder);
  const controller = new AbortController();
  const iterator = (await open(controller.signal))[Symbol.asyncIterator]();
  const received: string[] = [];
  for (let i = 0; i < frames; i++) received.push((await iterator.next()).value as string);
  controller.abort();
  const after = await iterator.next();
  return { received, endedAfterAbort: after.done === true, upstreamFinished: await closed };
}

export async function collectFrames(stream: AsyncIterable<string>): Promise<string[]> {
  const frames: string[] = [];
  for await (const frame of stream) frames.push(frame);
  return frames;
}

/**
 * For the enclosing describe block: a fake upstream, and the adapter `make` points at it, handed to `use` once started;
 * both are closed after the block, and the recorded requests cleared after each test.
 */
export function adapterOnFakeUpstream(make: (upstreamUrl: string) => ProviderAdapter, use: (upstream: FakeUpstream, adapter: ProviderAdapter) => void): void {
  let upstream: FakeUpstream | undefined;
  let adapter: ProviderAdapter | undefined;
  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    adapter = make(upstream.url);
    use(upstream, adapter);
  });
  afterAll(async () => {
    await adapter?.close();
    await upstream?.stop();
  });
  afterEach(() => {
    if (upstream) upstream.requests.length = 0;
  });
}
