// The data plane's HTTP front: /v1 requests are served straight from node:http, without the admin interface's framework,
// because every microsecond here is added to every model call. Same CONTRACT behaviour: ids on every answer, the decision
// order maintenance -> auth -> headers -> body, errors as CONTRACT bodies, every request after auth recorded.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentgwError, ID_PATTERN } from '../contract/index.js';
import { type ErrorLog, toAgentgwError } from '../http/error-handler.js';
import { newRequestId } from '../http/request-id.js';
import { authenticateAgent, refuseSuspended } from '../policy/auth.js';
import { traceStoppedError } from '../policy/trace-stop.js';
import { chatCompletions } from './dialects/chat-completions/chat-completions.js';
import type { DataPlane } from './data-plane.js';
import { embeddings } from './dialects/embeddings/embeddings.js';
import { checkedAnthropicBeta, checkedAnthropicVersion } from './anthropic-betas.js';
import { countTokens } from './dialects/messages/count-tokens.js';
import { anthropicErrorBody, isAnthropicPath } from '../contract/anthropic-error.js';
import { geminiErrorBody, isGeminiPath } from '../contract/gemini-error.js';
import { type GeminiRoute, geminiDispatch, geminiModels, geminiRoute } from './dialects/gemini/gemini-routes.js';
import { messages } from './dialects/messages/messages.js';
import { models } from './models.js';
import { responses } from './dialects/responses/responses.js';
import { deleteResponse, getResponse, listInputItems } from './dialects/responses/stored-responses.js';
import { type Exchange, sendJson } from './exchange.js';
import { parseReceivedJson } from '../json/parse-received.js';
import { type RequestContext, releaseHeldTarget, requestContext } from './request-context.js';

const TRACE_ID = /^[\x20-\x7e]{1,128}$/;
const NOT_FOUND =
  'the gateway serves POST /v1/chat/completions, /v1/embeddings, /v1/messages, /v1/messages/count_tokens and /v1/responses; GET and DELETE /v1/responses/{id}; GET /v1/responses/{id}/input_items and /v1/models; POST /v1beta/models/{model}:generateContent, :streamGenerateContent and :countTokens (also under /v1/models/); GET /v1beta/models and /v1beta/models/{model}.';

/**
 * Agent clients' own session ids, read as the trace id when no trace header is sent (Claude Code's, Codex's), so an
 * agent's run is one trace without any setup. One that is not a valid trace id is ignored, never refused.
 */
export const SESSION_HEADERS = ['x-claude-code-session-id', 'session-id', 'session_id'] as const;

type Route = 'chat' | 'embeddings' | 'messages' | 'count_tokens' | 'responses' | 'models' | StoredRoute | GeminiRoute | null;
type StoredRoute = 'response_get' | 'response_delete' | 'response_items';
type BodyRoute = Exclude<Route, 'models' | 'gemini_models' | 'gemini_model' | StoredRoute | null>;

const RESPONSES_PREFIX = '/v1/responses/';

/** The routes that are model calls, with the endpoint their trace steps record. */
const MODEL_CALL_ENDPOINTS: Partial<Record<Exclude<Route, null>, RequestContext['endpoint']>> = {
  chat: 'chat.completions',
  embeddings: 'embeddings',
  messages: 'messages',
  responses: 'responses',
  gemini_generate: 'gemini',
  gemini_stream: 'gemini',
};

/** GET / DELETE /v1/responses/{id}, GET /v1/responses/{id}/input_items. */
function storedRoute(method: string | undefined, path: string): Route {
  const rest = path.slice(RESPONSES_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash === -1) return method === 'GET' ? 'response_get' : method === 'DELETE' ? 'response_delete' : null;
  return rest.slice(slash) === '/input_items' && method === 'GET' ? 'response_items' : null;
}

/** The response id of a /v1/responses/{id}... path. */
function responseIdOf(url: string): string {
  const q = url.indexOf('?');
  const rest = (q === -1 ? url : url.slice(0, q)).slice(RESPONSES_PREFIX.length);
  const slash = rest.indexOf('/');
  return decodeURIComponent(slash === -1 ? rest : rest.slice(0, slash));
}

function route(method: string | undefined, url: string): Route {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  if (path.length > 4 && path.charCodeAt(path.length - 1) === 47) path = path.slice(0, -1);
  if (path === '/v1/chat/completions') return method === 'POST' ? 'chat' : null;
  if (path === '/v1/embeddings') return method === 'POST' ? 'embeddings' : null;
  if (path === '/v1/messages') return method === 'POST' ? 'messages' : null;
  if (path === '/v1/messages/count_tokens') return method === 'POST' ? 'count_tokens' : null;
  if (path === '/v1/responses') return method === 'POST' ? 'responses' : null;
  if (path === '/v1/models') return method === 'GET' || method === 'HEAD' ? 'models' : null;
  if (path.startsWith(RESPONSES_PREFIX) && path.length > RESPONSES_PREFIX.length) return storedRoute(method, path);
  return geminiRoute(method, path);
}

interface ErrorIds {
  requestId: string;
  traceId: string;
  errorDialect: 'openai' | 'anthropic' | 'gemini';
}

/** `?beta=true` when the query asks for Anthropic's beta features (Claude Code always does), else ''. */
function queryOf(req: IncomingMessage): string {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return q !== -1 && new URLSearchParams(url.slice(q + 1)).get('beta') === 'true' ? '?beta=true' : '';
}

function sessionTrace(h: IncomingMessage['headers']): string | undefined {
  for (const name of SESSION_HEADERS) {
    const v = one(h[name]);
    if (v !== undefined && TRACE_ID.test(v)) return v;
  }
  return undefined;
}

/** A Gemini client's key: x-goog-api-key, else the query's `key`. */
function geminiKeyOf(req: IncomingMessage): string | undefined {
  const header = one(req.headers['x-goog-api-key']);
  if (header !== undefined) return header;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return q === -1 ? undefined : (new URLSearchParams(url.slice(q + 1)).get('key') ?? undefined);
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Node joins repeated headers with ", "; the raw list tells a repeated header from a value with a comma. */
function headerCount(req: IncomingMessage, name: string): number {
  let n = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) n++;
  return n;
}

/** Nesting beyond which a stack overflow while handling a body is the body's doing, not a bug. */
const DEEP_NESTING = 100;

/** Levels of arrays and objects in a parsed JSON object, counted without recursion, and the top-level field that nests deepest. */
function jsonDepth(value: unknown): { depth: number; field: string | null } {
  let depth = 0;
  let field: string | null = null;
  const stack: Array<[unknown, number, string | null]> = [[value, 1, null]];
  while (stack.length > 0) {
    const [v, level, top] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (level > depth) [depth, field] = [level, top];
    for (const [k, child] of Object.entries(v)) if (child !== null && typeof child === 'object') stack.push([child, level + 1, top ?? k]);
  }
  return { depth, field };
}

/**
 * The 400 for a body nested so deeply that serialising it (to hash, count, capture or forward it) ran out of stack.
 * Checked only once that has happened, so ordinary requests never pay for walking their body.
 */
function tooDeepToProcess(e: unknown, body: unknown): AgentgwError | null {
  if (!(e instanceof RangeError) || !/call stack/i.test(e.message)) return null;
  const { depth, field } = jsonDepth(body);
  if (depth <= DEEP_NESTING) return null;
  return new AgentgwError('validation_failed', `The request body nests arrays and objects ${depth} levels deep${field ? ` in ${field}` : ''}, too deep to process: flatten it to a few hundred levels at most.`, {
    param: field,
  });
}

export class V1Server {
  /** Set when the server starts closing: new requests are turned away with 503, those in flight finish. */
  closing = false;

  constructor(
    private readonly dp: DataPlane,
    private readonly bodyLimit: number,
    private readonly log?: ErrorLog,
  ) {}

  /** True for the paths this server answers (everything under /v1). */
  static owns(url: string | undefined): boolean {
    if (url === undefined || !url.startsWith('/v1')) return false;
    if (url.length === 3 || url.charCodeAt(3) === 47 || url.charCodeAt(3) === 63) return true;
    // Google's API version of the Gemini routes.
    return url.startsWith('/v1beta') && (url.length === 7 || url.charCodeAt(7) === 47 || url.charCodeAt(7) === 63);
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const requestId = newRequestId();
    const h = req.headers;
    const agentTrace = one(h['x-agent-trace-id']);
    const gatewayTrace = agentTrace === undefined ? one(h['x-gateway-trace-id']) : undefined;
    let named = agentTrace ?? gatewayTrace;
    if (named === undefined) named = sessionTrace(h);
    const traceOk = named !== undefined && TRACE_ID.test(named);
    const which = route(req.method, req.url ?? '/');
    // Anthropic clients read Anthropic's error shape on every path of their API, wrong ones included.
    const errorDialect = isAnthropicPath(req.url ?? '') ? 'anthropic' : isGeminiPath(req.url ?? '') ? 'gemini' : 'openai';
    const ids = { requestId, traceId: traceOk ? named! : requestId, errorDialect } as const;
    let ctx: RequestContext | undefined;
    try {
      if (this.closing) {
        throw new AgentgwError('maintenance', 'The gateway is shutting down: retry in a moment (another node, or this one once restarted).', { headers: { 'retry-after': '5' } });
      }
      const m = this.dp.snapshot.maintenance;
      if (m.enabled) {
        throw new AgentgwError('maintenance', m.message ? `The gateway is in maintenance: ${m.message}` : 'The gateway is in maintenance: retry later.', {
          headers: { 'retry-after': '60' },
        });
      }
      // Anthropic clients send their key as x-api-key.
      // Gemini clients send theirs as x-goog-api-key or ?key= (never logged: no URL reaches a log or a trace).
      const apiKey =
        h.authorization !== undefined ? undefined : errorDialect === 'anthropic' ? one(h['x-api-key']) : errorDialect === 'gemini' ? geminiKeyOf(req) : undefined;
      if (which === 'models' && h.authorization === undefined && h['x-goog-api-key'] !== undefined) {
        // The @google/genai SDK lists models under its default API version, v1: that path is OpenAI's list.
        throw new AgentgwError('invalid_api_key', 'GET /v1/models is the OpenAI-format list and takes "Authorization: Bearer <AGENT_KEY>": Gemini clients list models with GET /v1beta/models (the @google/genai SDK with apiVersion "v1beta").');
      }
      if (errorDialect === 'gemini' && apiKey === undefined && h.authorization === undefined) {
        throw new AgentgwError('invalid_api_key', 'Missing API key: send your agent key as "x-goog-api-key: <AGENT_KEY>" (GEMINI_API_KEY for Gemini CLI) or as ?key=<AGENT_KEY>.');
      }
      const agent = authenticateAgent(apiKey !== undefined ? `Bearer ${apiKey}` : one(h.authorization), this.dp.hasher, this.dp.snapshot, errorDialect === 'anthropic');
      const now = Date.now();
      ctx = requestContext({
        requestId,
        traceId: ids.traceId,
        traceFromClient: named !== undefined,
        startedAt: performance.now(),
        startedAtIso: new Date(now).toISOString(),
        agent,
        headerPolicyId: one(h['x-agent-policy']),
        model: null,
        provider: null,
        stream: false,
        operation: 'chat',
        endpoint: 'chat.completions',
        errorDialect,
        piiTypes: [],
      });
      if (agent.suspended) {
        // Right after auth, before header and body validation. Like a stopped trace's, a model call's refusal is a
        // blocked step of its trace (the operator sees the agent kept trying); counting tokens, listing models and
        // reading stored responses are no model calls: answered, not recorded.
        const endpoint = which === null ? undefined : MODEL_CALL_ENDPOINTS[which];
        if (endpoint) ctx.endpoint = endpoint;
        try {
          refuseSuspended(agent);
        } catch (e) {
          this.fail(endpoint ? ctx : undefined, ids, res, e);
          return;
        }
      }
      const headerName = agentTrace !== undefined ? 'x-agent-trace-id' : 'x-gateway-trace-id';
      if (named !== undefined && named.includes(',') && headerCount(req, headerName) > 1) {
        throw new AgentgwError('invalid_header', 'Send the trace id header once: it was repeated.', { param: headerName });
      }
      if (named !== undefined && !traceOk) {
        const name = agentTrace !== undefined ? 'X-Agent-Trace-Id' : 'x-gateway-trace-id';
        throw new AgentgwError('invalid_header', `${name} must be 1-128 printable ASCII characters.`, { param: name.toLowerCase() });
      }
      if (ctx.headerPolicyId !== undefined && !ID_PATTERN.test(ctx.headerPolicyId)) {
        throw new AgentgwError('invalid_header', 'X-Agent-Policy must be a policy id (lowercase letters, digits, "_" or "-").', { param: 'x-agent-policy' });
      }
      if (which === 'messages' || which === 'count_tokens') {
        checkedAnthropicBeta(h['anthropic-beta'], this.dp.anthropicBetas);
        checkedAnthropicVersion(h['anthropic-version']);
      }
      if (which === null) {
        // Answered, not recorded: a wrong path is no model call, and probes must not fill traces and usage.
        this.fail(undefined, ids, res, new AgentgwError('route_not_found', `No route ${req.method} ${(req.url ?? '').split('?')[0]}: ${NOT_FOUND}`));
        return;
      }
      if (ctx.traceFromClient && this.dp.snapshot.isTraceStopped(agent.tenant_id, ctx.traceId)) {
        // Before the body is read (CONTRACT's order). A model call's refusal is a blocked step of the trace; counting
        // tokens, listing models and reading stored responses are no model calls: answered, not recorded.
        const endpoint = MODEL_CALL_ENDPOINTS[which];
        if (endpoint) ctx.endpoint = endpoint;
        this.fail(endpoint ? ctx : undefined, ids, res, traceStoppedError(ctx.traceId));
        return;
      }
      const ex: Exchange = { ctx, req, res, log: this.log };
      if (which === 'models') {
        models(this.dp, ex);
        return;
      }
      if (which === 'gemini_models' || which === 'gemini_model') {
        // Listing models is no model call: answered, not recorded.
        try {
          geminiModels(this.dp, ex, which === 'gemini_model');
        } catch (e) {
          this.fail(undefined, ids, res, e);
        }
        return;
      }
      if (which === 'response_get' || which === 'response_delete' || which === 'response_items') {
        this.stored(ex, which);
        return;
      }
      ctx.operation = which === 'embeddings' ? 'embeddings' : 'chat';
      if (which === 'messages' || which === 'count_tokens') ctx.endpoint = 'messages';
      else if (which === 'responses') ctx.endpoint = 'responses';
      else if (which === 'gemini_generate' || which === 'gemini_stream' || which === 'gemini_count') ctx.endpoint = 'gemini';
      this.readBody(req, res, ex, which);
    } catch (e) {
      this.fail(ctx, ids, res, e);
    }
  };

  /** Answers an error and, once the caller is known, records it with its code. */
  private fail(ctx: RequestContext | undefined, ids: ErrorIds, res: ServerResponse, e: unknown): void {
    const err = toAgentgwError(e, this.log);
    if (ctx) this.dp.record(ctx, { httpStatus: err.status, error: err });
    if (res.headersSent) {
      // A stream already started: nothing more can be said over HTTP.
      if (!res.writableEnded) res.end();
      return;
    }
    const body = ids.errorDialect === 'anthropic' ? anthropicErrorBody(err, ids.requestId) : ids.errorDialect === 'gemini' ? geminiErrorBody(err) : JSON.stringify(err.toBody());
    sendJson({ ctx: ids, res }, err.status, body, err.headers);
  }

  /** Stored responses: answered, not recorded (reading a stored answer is no model call). */
  private stored(ex: Exchange, which: StoredRoute): void {
    const url = ex.req.url ?? '';
    let id: string;
    try {
      id = responseIdOf(url);
    } catch {
      throw new AgentgwError('validation_failed', 'The response id in the path is not valid percent-encoding: send the id as returned (resp_...).', { param: 'response_id' });
    }
    const q = url.indexOf('?');
    const run =
      which === 'response_get'
        ? getResponse(this.dp, ex, id)
        : which === 'response_delete'
          ? deleteResponse(this.dp, ex, id)
          : listInputItems(this.dp, ex, id, new URLSearchParams(q === -1 ? '' : url.slice(q + 1)));
    run.catch((e: unknown) => this.fail(undefined, ex.ctx, ex.res, e));
  }

  /** 413, naming the limit and the key that raises it. */
  private tooLarge(): AgentgwError {
    const mb = Math.round((this.bodyLimit / (1024 * 1024)) * 100) / 100;
    return new AgentgwError('body_too_large', `The request body is larger than the gateway's limit of ${mb} MB: send a smaller body, or raise limits.body_mb in the server config.`);
  }

  private readBody(req: IncomingMessage, res: ServerResponse, ex: Exchange, which: BodyRoute): void {
    const h = req.headers;
    const type = h['content-type'];
    const declared = h['content-length'];
    if (type === undefined && h['transfer-encoding'] === undefined && (declared === undefined || declared === '0')) {
      this.dispatch(ex, which, undefined);
      return;
    }
    const semi = type === undefined ? -1 : type.indexOf(';');
    const media = type === undefined ? '' : (semi === -1 ? type : type.slice(0, semi)).trim().toLowerCase();
    if (media !== 'application/json') {
      throw new AgentgwError('invalid_header', 'Unsupported Content-Type: send the body as JSON with Content-Type: application/json.', { param: 'content-type' });
    }
    if (declared !== undefined && Number(declared) > this.bodyLimit) {
      res.setHeader('connection', 'close');
      throw this.tooLarge();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > this.bodyLimit && !failed) {
        failed = true;
        req.off('data', onData);
        res.setHeader('connection', 'close');
        this.fail(ex.ctx, ex.ctx, res, this.tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => {
      if (failed) return;
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      let body: unknown;
      try {
        if (bytes.length === 0) throw new SyntaxError('empty body');
        body = parseReceivedJson(bytes);
      } catch {
        this.fail(ex.ctx, ex.ctx, res, new AgentgwError('invalid_json', 'The request body is not valid JSON: send one JSON object with Content-Type: application/json.'));
        return;
      }
      this.dispatch(ex, which, body);
    });
    req.on('error', () => {
      // The client's connection broke mid-body: nobody is left to answer, but the attempt is recorded.
      if (failed) return;
      failed = true;
      this.dp.record(ex.ctx, { httpStatus: 499, error: new AgentgwError('client_closed', 'The client closed the connection before the request body was complete.') });
    });
  }

  private dispatch(ex: Exchange, which: BodyRoute, body: unknown): void {
    const run =
      which === 'chat'
        ? chatCompletions(this.dp, ex, body)
        : which === 'messages'
          ? messages(this.dp, ex, body, queryOf(ex.req))
          : which === 'count_tokens'
            ? countTokens(this.dp, ex, body, queryOf(ex.req))
            : which === 'responses'
              ? responses(this.dp, ex, body)
              : which === 'gemini_generate' || which === 'gemini_stream' || which === 'gemini_count'
                ? geminiDispatch(this.dp, ex, body, which)
                : embeddings(this.dp, ex, body);
    run.then(
      () => releaseHeldTarget(ex.ctx),
      (e: unknown) => {
        releaseHeldTarget(ex.ctx);
        try {
          // Counting tokens is no model call: its failures are answered, not recorded.
          this.fail(which === 'count_tokens' || which === 'gemini_count' ? undefined : ex.ctx, ex.ctx, ex.res, tooDeepToProcess(e, body) ?? e);
        } catch (bug) {
          this.log?.error({ err: bug }, 'failed to answer an error');
          ex.res.destroy();
        }
      },
    );
  }
}
