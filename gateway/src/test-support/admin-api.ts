import { expect } from 'vitest';
import type { z } from 'zod';
import type { TraceDetail as TraceDetailSchema } from '../contract/index.js';

/** The body of GET /traces/{trace_id}. */
export type TraceDetail = z.infer<typeof TraceDetailSchema>;

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  body: T;
  text: string;
}

export interface CallOptions {
  /** A JSON value sent with Content-Type: application/json. */
  body?: unknown;
  /** A body sent as is (malformed JSON, other media types); Content-Type stays application/json unless headers say otherwise. */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  /** Another admin key for this one call; null sends no Authorization header. */
  key?: string | null;
  /** Aborts the call (AbortSignal.timeout bounds one that might never be answered). */
  signal?: AbortSignal;
}

export type AdminCall = <T = any>(method: string, path: string, opts?: CallOptions) => Promise<ApiResponse<T>>;

/** A plain-fetch client of the admin interface at `adminUrl` (http://HOST:PORT/api). */
export function adminApi(adminUrl: string, key: string): AdminCall {
  return async (method, path, opts = {}) => {
    const k = opts.key === undefined ? key : opts.key;
    const headers: Record<string, string> = {};
    if (k !== null) headers.authorization = `Bearer ${k}`;
    const hasBody = opts.body !== undefined || opts.raw !== undefined;
    if (hasBody) headers['content-type'] = 'application/json';
    Object.assign(headers, opts.headers ?? {});
    for (const [h, v] of Object.entries(headers)) if (v === '') delete headers[h];
    const res = await fetch(`${adminUrl}${path}`, {
      method,
      headers,
      body: opts.raw !== undefined ? opts.raw : opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
      signal: opts.signal,
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, body: body as any, text };
  };
}

/** CONTRACT's error types by code. */
const TYPES: Record<string, string> = {
  invalid_json: 'invalid_request_error',
  validation_failed: 'invalid_request_error',
  invalid_header: 'invalid_request_error',
  body_too_large: 'invalid_request_error',
  invalid_api_key: 'authentication_error',
  insufficient_role: 'permission_denied',
  tenant_forbidden: 'permission_denied',
  tenant_not_found: 'not_found',
  agent_not_found: 'not_found',
  policy_not_found: 'not_found',
  trace_not_found: 'not_found',
  admin_key_not_found: 'not_found',
  route_not_found: 'not_found',
  agent_exists: 'conflict',
  tenant_exists: 'conflict',
  policy_in_use: 'conflict',
  tenant_not_empty: 'conflict',
};

/** Asserts CONTRACT's error body: `{error: {message, type, code, param}}` with a sentence and, when given, the field at fault. */
export function expectError(res: ApiResponse, status: number, code: string, param?: string | null): void {
  const where = `${res.status} ${res.text}`;
  expect(res.status, where).toBe(status);
  expect(res.headers.get('content-type') ?? '', where).toMatch(/^application\/json/);
  expect(res.body, where).toMatchObject({ error: { message: expect.any(String), type: TYPES[code] ?? expect.any(String), code } });
  expect(Object.keys(res.body), where).toEqual(['error']);
  expect(Object.keys(res.body.error).sort(), where).toEqual(['code', 'message', 'param', 'type']);
  const p = res.body.error.param;
  if (param === undefined) expect(p === null || typeof p === 'string', where).toBe(true);
  else expect(p, where).toBe(param);
  expectSentence(res.body.error.message);
}

/** A human sentence: words, a full stop, no stack trace. */
export function expectSentence(message: string): void {
  expect(message.length, message).toBeGreaterThan(15);
  expect(message, message).toMatch(/[.!]$/);
  expect(message, message).not.toMatch(/\n\s+at |undefined$|\[object Object\]/);
}

export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Polls until `check` returns a value that is not undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The trace once GET /api/traces/{id} lists `steps` steps (recorded or running), polled as `eventually` does; more
 * steps than that fail at once (they never become fewer).
 */
export function traceWithSteps(gw: { adminUrl: string; adminKey: string }, traceId: string, steps: number, timeoutMs = 5000): Promise<TraceDetail> {
  return eventually(async () => {
    const res = await adminApi(gw.adminUrl, gw.adminKey)<TraceDetail>('GET', `/traces/${encodeURIComponent(traceId)}`);
    if (res.status === 200 && res.body.requests.length > steps) throw new Error(`trace ${traceId} has ${res.body.requests.length} steps, not ${steps}`);
    return res.status === 200 && res.body.requests.length === steps ? res.body : undefined;
  }, timeoutMs, `trace ${traceId} with ${steps} steps`);
}
