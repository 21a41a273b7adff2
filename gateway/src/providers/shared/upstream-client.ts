// One keep-alive undici Pool per provider, created once; every upstream call goes through send() so errors map in one place.
import type { Dispatcher } from 'undici';
import { Pool, request } from './undici-pool.js';
import type { ProviderIdentity } from './provider-identity.js';
import type { CancelSignal, ChatStream } from '../spec.js';
import { FrameStream, type FrameTranslator } from './frame-stream.js';
import type { StreamMeter } from './stream-meter.js';
import { DEFAULT_UPSTREAM_BODY_BYTES, bodyLimitOf, limitBody, upstreamBodyTooLarge } from './upstream-body-limit.js';
import { upstreamFailure } from './upstream-failure.js';
import { ErrorBody, retryAfterOf, upstreamStatusError } from './upstream-status-error.js';

export interface UpstreamTimeouts {
  timeout_ms?: number;
  connect_timeout_ms?: number;
  body_timeout_ms?: number;
  max_connections?: number;
  /** limits.upstream_body_mb in bytes, which createProvider adds to every provider's settings: see upstream-body-limit.ts. */
  max_body_bytes?: number;
}

export interface UpstreamRequest {
  /** Path after the base URL's own path, with its query string. */
  path: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
  signal: CancelSignal;
}

export type UpstreamResponse = Dispatcher.ResponseData;


export class UpstreamClient {
  readonly baseUrl: string;
  /** host[:port] of the upstream, as request signers need it. */
  readonly host: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly pool: Pool;
  /** The most of a successful body held at once: the whole body, or one event of a stream. */
  private readonly maxBodyBytes: number;

  constructor(readonly identity: ProviderIdentity, baseUrl: string, timeouts: UpstreamTimeouts) {
    this.maxBodyBytes = timeouts.max_body_bytes ?? DEFAULT_UPSTREAM_BODY_BYTES;
    const url = new URL(baseUrl);
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.origin = url.origin;
    this.host = url.host;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(this.origin, {
      connections: timeouts.max_connections ?? 128,
      headersTimeout: timeouts.timeout_ms ?? 60_000,
      bodyTimeout: timeouts.body_timeout_ms ?? 120_000,
      connect: { timeout: timeouts.connect_timeout_ms ?? 10_000 },
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
    });
  }

  /** Full path on the origin, as signers need it. */
  pathFor(path: string): string {
    return this.basePath + path;
  }

  /** Sends a POST; resolves with a 2xx response whose body is still unread, rejects with an AgentgwError otherwise. */
  async send(req: UpstreamRequest): Promise<UpstreamResponse> {
    let res: UpstreamResponse;
    try {
      // The pool directly: no URL parse and no dispatcher look-up per call.
      res = await request(this.pool, {
        path: this.basePath + req.path,
        method: 'POST',
        headers: req.headers,
        body: req.body,
        // undici takes any signal with aborted, reason and add/removeEventListener, not only an AbortSignal.
        signal: req.signal as AbortSignal,
      });
    } catch (err) {
      throw upstreamFailure(this.identity, err, req.signal);
    }
    if (res.statusCode >= 200 && res.statusCode < 300) {
      limitBody(res.body, this.maxBodyBytes);
      return res;
    }
    throw upstreamStatusError(this.identity, res.statusCode, await readErrorBody(res.body), retryAfterOf(res.headers));
  }

  /**
   * Sends a POST whose answer is a stream of server-sent events, translated frame by frame as each network chunk arrives.
   * Resolves once the upstream answered 2xx (so a failure before the first byte can still fall back), rejects otherwise.
   */
  openFrames(req: UpstreamRequest, parts: { meter: StreamMeter; translator: FrameTranslator }): Promise<ChatStream> {
    return FrameStream.open(
      this.pool,
      { path: this.basePath + req.path, headers: req.headers, body: req.body },
      { identity: this.identity, signal: req.signal, meter: parts.meter, translator: parts.translator, maxEventBytes: this.maxBodyBytes },
    );
  }

  /** Sends and parses a JSON answer. */
  async sendJson<T>(req: UpstreamRequest): Promise<T> {
    return (await this.sendJsonText<T>(req)).value;
  }

  /** Sends and parses a JSON answer, keeping its text so it can be passed on without serialising it again. */
  async sendJsonText<T>(req: UpstreamRequest): Promise<{ value: T; text: string }> {
    const { statusCode, text, retryAfter } = await this.collect(req);
    if (statusCode < 200 || statusCode >= 300) throw upstreamStatusError(this.identity, statusCode, text, retryAfter);
    return { value: parseJsonObject<T>(this.identity, text, req.signal), text };
  }

  /**
   * Sends a POST and gathers the whole answer, whatever its status, straight from the connection: no stream object,
   * no header parsing beyond the status. An error body is cut at ERROR_BODY_LIMIT (see ErrorBody); a 2xx body is read
   * whole, up to maxBodyBytes: past it the call fails and the connection is dropped.
   */
  private collect(req: UpstreamRequest): Promise<{ statusCode: number; text: string; retryAfter?: string }> {
    const { signal } = req;
    const identity = this.identity;
    const limit = this.maxBodyBytes;
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const errorBody = new ErrorBody();
      let statusCode = 0;
      let retryAfter: string | undefined;
      let abort: ((err: Error) => void) | null = null;
      let settled = false;
      const onAbort = () => abort?.(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
      const finish = (err: unknown, text?: string) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        if (err !== null) reject(upstreamFailure(identity, err, signal));
        else resolve({ statusCode, text: text!, retryAfter });
      };
      this.pool.dispatch(
        { path: this.basePath + req.path, method: 'POST', headers: req.headers, body: req.body },
        {
          onConnect(a: (err: Error) => void) {
            abort = a;
            if (signal.aborted) onAbort();
          },
          onHeaders(status: number, headers: unknown) {
            statusCode = status;
            if (status === 429) retryAfter = retryAfterOf(headers);
            return true;
          },
          onData(chunk: Buffer) {
            if (statusCode < 200 || statusCode >= 300) {
              // A failed call's body only feeds an error message: keep its start, drop the connection rather than read on.
              if (errorBody.add(chunk)) {
                finish(null, errorBody.text());
                abort?.(new Error('error body cut short'));
                return false;
              }
              return true;
            }
            size += chunk.length;
            if (size > limit) {
              chunks.length = 0;
              finish(upstreamBodyTooLarge(identity, limit, 'body'));
              abort?.(new Error('response body too large'));
              return false;
            }
            chunks.push(chunk);
            return true;
          },
          onComplete() {
            if (statusCode < 200 || statusCode >= 300) finish(null, errorBody.text());
            else finish(null, chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8'));
          },
          onError(err: Error) {
            // Headers already said the call failed: that status is the answer, whatever broke after it.
            if (statusCode >= 300) finish(null, errorBody.text());
            else finish(err);
          },
          onUpgrade() {},
          onBodySent() {},
        } as unknown as Dispatcher.DispatchHandler,
      );
    });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/** Reads a 2xx response from send() and parses it as a JSON object. */
export async function readJson<T>(identity: ProviderIdentity, res: UpstreamResponse, signal: CancelSignal): Promise<T> {
  return parseJsonObject<T>(identity, await readText(identity, res, signal), signal);
}

/** Reads a 2xx response from send() whole, up to limits.upstream_body_mb: past it the call fails and the connection is dropped. */
export async function readText(identity: ProviderIdentity, res: UpstreamResponse, signal: CancelSignal): Promise<string> {
  const limit = bodyLimitOf(res.body);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      size += bytes.length;
      if (size > limit) {
        res.body.destroy();
        throw upstreamBodyTooLarge(identity, limit, 'body');
      }
      chunks.push(bytes);
    }
  } catch (err) {
    throw upstreamFailure(identity, err, signal);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/** An upstream's answer must be a JSON object; anything else is its fault (upstream_bad_response). */
function parseJsonObject<T>(identity: ProviderIdentity, text: string, signal: CancelSignal): T {
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null || typeof value !== 'object') throw new SyntaxError('not an object');
    return value as T;
  } catch (err) {
    throw upstreamFailure(identity, err, signal);
  }
}

/** Reads the start of an error body (see ErrorBody), then lets the rest go (error pages can be large). */
async function readErrorBody(body: UpstreamResponse['body']): Promise<string> {
  const errorBody = new ErrorBody();
  try {
    for await (const chunk of body) {
      if (errorBody.add(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer))) {
        body.destroy();
        break;
      }
    }
  } catch {
    // A broken error body still leaves the status to report.
  }
  return errorBody.text();
}
