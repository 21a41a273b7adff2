import type { Dispatcher } from 'undici';
import { AdminApiError, AdminConnectionError, connectionReason } from './errors.js';

export interface HttpOptions {
  /** The admin base address, e.g. http://127.0.0.1:8080/api */
  baseUrl: string;
  adminKey: string;
  dispatcher?: Dispatcher;
  /** Milliseconds to wait for an answer. */
  timeoutMs?: number;
}

export interface SendOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface HttpResponse<T> {
  status: number;
  data: T;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The HTTP client loads with the first admin call: `agentgw serve` shares this binary and never makes one. */
let undici: Promise<typeof import('undici')> | undefined;

/** One JSON request to the admin interface; every non-2xx answer becomes an AdminApiError. */
export class AdminHttp {
  readonly baseUrl: string;
  private readonly adminKey: string;
  private readonly dispatcher?: Dispatcher;
  private readonly timeoutMs: number;
  /** Sent with every later request (a request's own headers win). */
  readonly defaultHeaders: Record<string, string> = {};

  constructor(opts: HttpOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.adminKey = opts.adminKey;
    this.dispatcher = opts.dispatcher;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  async send<T>(method: Method, path: string, opts: SendOptions = {}): Promise<HttpResponse<T>> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.adminKey}`,
      accept: 'application/json',
      ...this.defaultHeaders,
      ...opts.headers,
    };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';

    const { request } = await (undici ??= import('undici'));
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        dispatcher: this.dispatcher,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
    } catch (e) {
      throw new AdminConnectionError(this.baseUrl, connectionReason(e));
    }

    let text: string;
    try {
      text = await res.body.text();
    } catch (e) {
      throw new AdminConnectionError(this.baseUrl, connectionReason(e));
    }
    if (res.statusCode >= 400) throw toApiError(res.statusCode, text);
    return { status: res.statusCode, data: parseJson(text, res.statusCode) as T };
  }
}

function parseJson(text: string, status: number): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new AdminApiError(status, 'invalid_response', 'the admin interface answered with a body that is not JSON');
  }
}

/** Reads CONTRACT's error body `{error: {message, type, code, param}}`; anything else still yields a sentence. */
function toApiError(status: number, text: string): AdminApiError {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; type?: unknown; code?: unknown; param?: unknown } };
    const err = body?.error;
    if (err && typeof err.message === 'string' && typeof err.code === 'string') {
      return new AdminApiError(status, err.code, err.message, {
        type: typeof err.type === 'string' ? err.type : undefined,
        param: typeof err.param === 'string' ? err.param : null,
      });
    }
  } catch {
    // not JSON: fall through to a generic error
  }
  const snippet = text.trim().slice(0, 200);
  return new AdminApiError(status, `http_${status}`, snippet ? `HTTP ${status}: ${snippet}` : `HTTP ${status} with an empty body`);
}
