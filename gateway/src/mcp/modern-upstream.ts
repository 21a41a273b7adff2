// An upstream MCP server reached over the 2026-07-28 revision: no session, each request a POST of its own carrying the
// protocol version, the client's capabilities and log level in its `_meta`, with the Mcp-Method, Mcp-Name and
// Mcp-Param-* headers that revision asks for. Used for the requests of clients of that revision (stateless /mcp), when
// the server says by server/discover that it serves it: what it offers only there (input_required results, tools it
// lists only to that revision, SEP-2164 errors) then reaches them. The answer is JSON or an SSE stream whose
// notifications (progress, log messages) come before the result.
import { createParser } from 'eventsource-parser';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { VERSION } from '../version.js';
import { encodeMcpParamValue, mcpParamDeclarations, paramHeaderValue } from './mcp-param-headers.js';

export const MODERN_REVISION = '2026-07-28';

/** Who asks, in every request's `_meta`. */
const AGENTGW_INFO = { name: 'agentgw', version: VERSION };

/** The most an answer may hold (a larger one is a failure of the server's, not a result). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** The most one event of a listen stream may hold (list changes are a few hundred bytes). */
const MAX_NOTICE_BYTES = 64 * 1024;

/** Which request param Mcp-Name mirrors, per method (the revision's standard headers). */
const NAME_SOURCE: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

/** A client's request of the 2026-07-28 revision, as far as it goes upstream with what agentgw forwards. */
export interface ModernCall {
  /** Its `_meta` envelope: its capabilities (what an upstream may ask of it in input requests), log level and info. */
  envelope: { capabilities: unknown; logLevel?: unknown };
  /** The answers to an earlier input_required result, and the state that came with it (opaque: the upstream's). */
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

export interface ModernNotification {
  method: string;
  params?: Record<string, unknown>;
}

export interface ModernRequestOptions {
  signal?: AbortSignal;
  /** The notifications the server sends on the answer's stream before its result (progress, log messages). */
  onnotification?(n: ModernNotification): void;
  /** The tool's input schema, for the Mcp-Param-* headers of a tools/call (built from the arguments sent). */
  inputSchema?: unknown;
}

/** What reaching the server failed with, as distinct from an answer of the server's (an McpError). */
export class ModernTransportError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The connection details of one server (its URL and headers; how requests are sent: agentgw's OAuth token when set). */
export class ModernChannel {
  private nextId = 1;

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
    private readonly fetchImpl: FetchLike | undefined,
    private readonly timeoutMs: number,
  ) {}

  /**
   * server/discover: whether the server serves this revision (its supportedVersions name it). A server of earlier
   * revisions only answers with an error or a non-JSON-RPC status: false. Failing to reach it throws.
   */
  async discover(signal?: AbortSignal): Promise<boolean> {
    try {
      const r = await this.request('server/discover', {}, { capabilities: {} }, { signal });
      return Array.isArray(r.supportedVersions) && r.supportedVersions.includes(MODERN_REVISION);
    } catch (e) {
      // The server's answer that it does not know the method, or a client error status: earlier revisions only. A
      // timeout, a 429 or a failure to reach it says nothing: asked again later.
      if (e instanceof McpError && e.code !== ErrorCode.RequestTimeout) return false;
      if (e instanceof ModernTransportError && e.status !== undefined && e.status >= 400 && e.status < 500 && e.status !== 429) return false;
      throw e;
    }
  }

  /**
   * One request. `envelope` is the client's: its capabilities (what its input requests may ask) and log level; the
   * protocol version is this revision's, and the client named is agentgw (as on its sessions). A JSON-RPC error is thrown as McpError (code, message and data as sent).
   */
  async request(method: string, params: Record<string, unknown>, envelope: ModernCall['envelope'], options: ModernRequestOptions = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const meta: Record<string, unknown> = {
      ...(params._meta as Record<string, unknown> | undefined),
      [PROTOCOL_VERSION_META_KEY]: MODERN_REVISION,
      [CLIENT_CAPABILITIES_META_KEY]: envelope.capabilities ?? {},
      [CLIENT_INFO_META_KEY]: AGENTGW_INFO,
    };
    if (envelope.logLevel !== undefined) meta['io.modelcontextprotocol/logLevel'] = envelope.logLevel;
    const headers: Record<string, string> = {
      ...this.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_REVISION,
      'mcp-method': method,
    };
    const source = NAME_SOURCE[method];
    const named = source ? params[source] : undefined;
    if (typeof named === 'string') headers['mcp-name'] = encodeMcpParamValue(named);
    if (method === 'tools/call' && options.inputSchema !== undefined) {
      for (const d of mcpParamDeclarations(options.inputSchema)) {
        const value = paramHeaderValue(d, params.arguments);
        if (value !== undefined) headers[`mcp-param-${d.headerName.toLowerCase()}`] = encodeMcpParamValue(value);
      }
    }
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await (this.fetchImpl ?? fetch)(this.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }), signal });
    } catch (e) {
      throw this.failure(e, timeout);
    }
    try {
      const type = res.headers.get('content-type') ?? '';
      if (type.startsWith('text/event-stream') && res.ok) return await this.fromStream(res, id, options);
      if (type.includes('json')) {
        const message: unknown = JSON.parse(await readCapped(res));
        try {
          return answerOf(message, id);
        } catch (e) {
          // An error status with a body that is no answer to this request (another id, no error member): the status says it.
          if (e instanceof ModernTransportError && !res.ok) throw new ModernTransportError(`HTTP ${res.status}`, res.status);
          throw e;
        }
      }
      await res.body?.cancel().catch(() => undefined);
      throw new ModernTransportError(`HTTP ${res.status}`, res.status);
    } catch (e) {
      if (e instanceof McpError || e instanceof ModernTransportError) throw e;
      throw this.failure(e, timeout);
    }
  }

  /**
   * subscriptions/listen: a stream of the server's list changes (tools, prompts, resources), each handed on as it
   * comes, until the server ends it or `signal` aborts (`onopen` once the server took it). Resolves when it ends;
   * throws when it cannot be opened.
   */
  async listen(onnotification: (n: ModernNotification) => void, signal: AbortSignal, onopen?: () => void): Promise<void> {
    const id = this.nextId++;
    const params = {
      notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true },
      _meta: { [PROTOCOL_VERSION_META_KEY]: MODERN_REVISION, [CLIENT_CAPABILITIES_META_KEY]: {}, [CLIENT_INFO_META_KEY]: AGENTGW_INFO },
    };
    const headers = { ...this.headers, 'content-type': 'application/json', accept: 'text/event-stream, application/json', 'mcp-protocol-version': MODERN_REVISION, 'mcp-method': 'subscriptions/listen' };
    const res = await (this.fetchImpl ?? fetch)(this.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params }), signal });
    if (!res.ok || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      await res.body?.cancel().catch(() => undefined);
      throw new ModernTransportError(`HTTP ${res.status}`, res.status);
    }
    onopen?.();
    // Bytes fed since the last event or comment (a server's keep-alive): one event larger than any notice is a server
    // gone wrong, not one to hold.
    let sinceEvent = 0;
    let ended = false;
    const parser = createParser({
      onComment: () => {
        ended = true;
      },
      onEvent: (event) => {
        ended = true;
        try {
          const m = JSON.parse(event.data) as { id?: unknown; method?: unknown; params?: Record<string, unknown> };
          if (m.id === undefined && typeof m.method === 'string') onnotification({ method: m.method, params: m.params });
        } catch {
          // An event that is not JSON carries nothing to hand on.
        }
      },
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        ended = false;
        parser.feed(value);
        sinceEvent = ended ? 0 : sinceEvent + value.length;
        if (sinceEvent > MAX_NOTICE_BYTES) throw new ModernTransportError(`a listen-stream event is larger than ${MAX_NOTICE_BYTES} bytes`);
      }
    } finally {
      void reader.cancel().catch(() => undefined);
    }
  }

  private failure(e: unknown, timeout: AbortSignal): Error {
    if (timeout.aborted) return new McpError(ErrorCode.RequestTimeout, `Request timed out after ${this.timeoutMs} ms`);
    if (e instanceof Error && e.name === 'AbortError') return e;
    return new ModernTransportError(e instanceof SyntaxError ? 'the answer is not JSON' : 'the request failed');
  }

  /** Reads the answer's events: notifications are handed on as they come, the response with the request's id ends it. */
  private async fromStream(res: Response, id: number, options: ModernRequestOptions): Promise<Record<string, unknown>> {
    let answer: Record<string, unknown> | undefined;
    let failed: unknown;
    const parser = createParser({
      onEvent: (event) => {
        if (answer !== undefined || failed !== undefined || event.data.length === 0) return;
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(event.data) as Record<string, unknown>;
        } catch (e) {
          failed = e;
          return;
        }
        if (message.id === undefined && typeof message.method === 'string') {
          options.onnotification?.({ method: message.method, params: message.params as Record<string, unknown> | undefined });
          return;
        }
        // A request of the server's has no place on this revision's answer stream; anything else is the answer.
        if (message.method !== undefined) return;
        try {
          answer = answerOf(message, id);
        } catch (e) {
          failed = e;
        }
      },
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let bytes = 0;
    try {
      while (answer === undefined && failed === undefined) {
        const { value, done } = await reader.read();
        if (done) break;
        bytes += value.length;
        if (bytes > MAX_ANSWER_BYTES) throw new ModernTransportError(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
        parser.feed(value);
      }
    } finally {
      void reader.cancel().catch(() => undefined);
    }
    if (failed !== undefined) throw failed;
    if (answer === undefined) throw new ModernTransportError('the answer stream ended without a response');
    return answer;
  }
}

/** The result of a JSON-RPC response to request `id`; its error as McpError. */
function answerOf(message: unknown, id: number): Record<string, unknown> {
  const m = message as { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
  if (m === null || typeof m !== 'object' || (m.id !== id && m.id !== null)) throw new ModernTransportError('the answer is not a response to the request');
  if (m.error && typeof m.error === 'object') {
    const code = typeof m.error.code === 'number' ? m.error.code : ErrorCode.InternalError;
    throw new UpstreamAnswerError(code, typeof m.error.message === 'string' ? m.error.message : 'error', m.error.data);
  }
  if (m.result === null || typeof m.result !== 'object' || Array.isArray(m.result)) throw new ModernTransportError('the answer carries no result');
  return m.result as Record<string, unknown>;
}

/** A JSON-RPC error as the server sent it: its message kept as written (McpError would prefix "MCP error <code>:"). */
class UpstreamAnswerError extends McpError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.message = message;
  }
}

/** The body as text, refused past MAX_ANSWER_BYTES (read as it comes: a server cannot make agentgw hold more). */
async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text;
      text += value;
      if (text.length > MAX_ANSWER_BYTES) throw new ModernTransportError(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    }
  } finally {
    void reader.cancel().catch(() => undefined);
  }
}
