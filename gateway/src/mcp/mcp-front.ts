// The HTTP front of /mcp (raw node:http, beside the /v1 front): maintenance, agent auth (an agent key, or an OAuth access
// token when mcp.authorization_servers are configured; 401 with the OpenAI body and WWW-Authenticate: Bearer), the trace
// and policy headers, then the session's SDK transport answers (a stateless request of the 2026-07-28 revision: see
// stateless.ts). It also serves the protected resource metadata.
import { type IncomingMessage, request as httpRequest, type ServerResponse } from 'node:http';
import { AgentgwError, ID_PATTERN } from '../contract/index.js';
import { SESSION_HEADERS } from '../data-plane/v1-server.js';
import { type ErrorLog, toAgentgwError } from '../http/error-handler.js';
import { newRequestId } from '../http/request-id.js';
import { authenticateAgent, bearerKey } from '../policy/auth.js';
import type { KeyHasher } from '../security/keys.js';
import type { Snapshot } from '../storage/snapshot.js';
import type { McpSession } from './mcp-session.js';
import { type McpResourceAuth, PROTECTED_RESOURCE_PATH } from './oauth-resource.js';
import { type AgentCredentials, type AgentHeaders, withAgentCredentials } from './agent-credentials.js';
import type { StoredAgent } from '../storage/store.js';
import type { OriginCheck } from './origin.js';
import type { Sessions } from './sessions.js';
import type { McpCaller } from './tool-call.js';
import type { StatelessMcp } from './stateless.js';
import { one, pipe, toWebRequest } from './web-exchange.js';

const TRACE_ID = /^[\x20-\x7e]{1,128}$/;
const PATH = '/mcp';

type RequestId = string | number;

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}, id: RequestId | null = null): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** The id of the one JSON-RPC request a body holds (null for a notification, a response or a batch). */
function requestIdOf(body: unknown): RequestId | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const id = (body as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function isInitialize(body: unknown): body is { method: 'initialize'; params?: { protocolVersion?: unknown; capabilities?: unknown } } {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && (body as { method?: unknown }).method === 'initialize';
}

/** The body's request carries a 2026-07-28 `_meta` envelope (an initialize that does is not a 2025 handshake). */
function claimsEnvelope(body: unknown): boolean {
  const meta = (body as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
  return typeof meta === 'object' && meta !== null && 'io.modelcontextprotocol/protocolVersion' in meta;
}

export interface McpFrontDeps {
  snapshot: Snapshot;
  hasher: KeyHasher;
  /** The sessions, once /mcp is loaded (see mcp-engine.ts). */
  sessions(): Promise<Sessions>;
  bodyLimit: number;
  log?: ErrorLog;
  /** Origin and Host validation (mcp.allowed_origins). */
  origins?: OriginCheck;
  /** Whether a server of that name is configured (served alone at /mcp/<server>). */
  hasServer?(name: string): boolean;
  /** OAuth access tokens of mcp.authorization_servers, beside agent keys (absent: agent keys only). */
  oauth?: McpResourceAuth;
  /** Per-agent upstream credentials (PUT /api/agents/{id}/mcp-credentials/{server}). */
  credentials?: AgentCredentials;
  /** Another node that runs a server this one does not (a stdio server on one node only): its base URL. */
  peerFor?(server: string): Promise<string | undefined>;
  /** The address a request reached this node at: other nodes pass requests for its servers there. */
  reachedAt?(url: string): void;
}

/** Set on a request one node passes to another: never passed on again. */
const FORWARDED = 'x-agentgw-forwarded';

const NO_CREDENTIALS: AgentHeaders = new Map();

export class McpFront {
  closing = false;
  /** The 2026-07-28 requests' handler, made on the first. */
  private stateless: Promise<StatelessMcp> | undefined;

  constructor(private readonly deps: McpFrontDeps) {}

  /** True for /mcp and the paths under it. */
  static owns(url: string | undefined): boolean {
    return url !== undefined && (under(url, PATH) || under(url, PROTECTED_RESOURCE_PATH));
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    res.setHeader('x-request-id', newRequestId());
    if (this.deps.reachedAt && req.socket.localAddress && req.socket.localPort) {
      const host = req.socket.localAddress.replace(/^::ffff:/, '');
      this.deps.reachedAt(`http://${host.includes(':') ? `[${host}]` : host}:${req.socket.localPort}`);
    }
    const path = (req.url ?? '').split('?')[0]!;
    if (under(path, PROTECTED_RESOURCE_PATH)) {
      this.serveMetadata(req, res, path);
      return;
    }
    this.serve(req, res).catch((e: unknown) => this.fail(res, e, scopeOf(path) ?? undefined));
  };

  /** Ends the 2026-07-28 exchanges in flight (subscriptions/listen streams included). */
  async closeStateless(): Promise<void> {
    await (await this.stateless?.catch(() => undefined))?.close();
  }

  private fail(res: ServerResponse, e: unknown, scope?: string): void {
    const err = toAgentgwError(e, this.deps.log);
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    const body = JSON.stringify(err.toBody());
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), ...err.headers };
    if (err.status === 401) headers['www-authenticate'] = this.deps.oauth?.challenge(scope) ?? 'Bearer';
    res.writeHead(err.status, headers);
    res.end(body);
  }

  /** An agent key (agk_...) as on /v1; with authorization servers configured, any other bearer is checked as their access token. */
  private async authenticate(header: string | undefined, scope: string | undefined) {
    const oauth = this.deps.oauth;
    const parsed = bearerKey(header);
    if (!oauth || !('key' in parsed) || parsed.key.startsWith('agk_')) return authenticateAgent(header, this.deps.hasher, this.deps.snapshot);
    return oauth.authenticate(parsed.key, scope);
  }

  /**
   * RFC 9728 metadata at /.well-known/oauth-protected-resource, with the endpoint's path appended (/mcp, /mcp/<server>),
   * as the MCP authorization spec has clients look for it; 404 when no authorization server is configured.
   */
  private serveMetadata(req: IncomingMessage, res: ServerResponse, path: string): void {
    req.resume();
    const oauth = this.deps.oauth;
    const rest = path.slice(PROTECTED_RESOURCE_PATH.length);
    const scope = rest === '' || rest === '/' ? undefined : under(rest, PATH) ? scopeOf(rest) : null;
    const known = scope === undefined || (scope !== null && this.deps.hasServer?.(scope) === true);
    let status = 200;
    let doc: unknown;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      status = 405;
      doc = new AgentgwError('validation_failed', `${PROTECTED_RESOURCE_PATH} takes GET.`).toBody();
    } else if (!oauth) {
      status = 404;
      doc = new AgentgwError('route_not_found', '/mcp takes agent keys only: no OAuth authorization server is configured (mcp.authorization_servers), so it publishes no protected resource metadata.').toBody();
    } else if (!known) {
      status = 404;
      doc = new AgentgwError('route_not_found', `No protected resource at ${path.slice(0, 200)}: the MCP endpoints are ${PATH} and ${PATH}/<server> (${PROTECTED_RESOURCE_PATH}${PATH}[/<server>]).`).toBody();
    } else {
      doc = oauth.metadata(scope ?? undefined);
    }
    const body = JSON.stringify(doc);
    // Public metadata: browser-based MCP clients read it from other origins.
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'access-control-allow-origin': '*', 'cache-control': 'max-age=300', ...(status === 405 ? { allow: 'GET, HEAD' } : {}) });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { snapshot } = this.deps;
    const h = req.headers;
    if (this.closing) {
      throw new AgentgwError('maintenance', 'The gateway is shutting down: reconnect in a moment (another node, or this one once restarted).', { headers: { 'retry-after': '5' } });
    }
    const m = snapshot.maintenance;
    if (m.enabled) throw new AgentgwError('maintenance', m.message ? `The gateway is in maintenance: ${m.message}` : 'The gateway is in maintenance: retry later.', { headers: { 'retry-after': '60' } });
    const path = (req.url ?? '').split('?')[0]!;
    const scope = scopeOf(path);
    if (scope === null) {
      req.resume();
      throw new AgentgwError('route_not_found', `No route ${req.method} ${path}: the MCP endpoints are ${PATH} (every server) and ${PATH}/<server> (one server) (POST, GET and DELETE, Streamable HTTP).`);
    }
    // Before auth: a page of another origin learns nothing, not even whether a key is valid.
    this.deps.origins?.check(one(h.origin), one(h.host));
    const agent = await this.authenticate(one(h.authorization), scope);
    if (scope !== undefined && !this.deps.hasServer?.(scope)) {
      // Configured on another node only: that node serves the whole endpoint (every request of its sessions goes there).
      const peer = h[FORWARDED] === undefined ? await this.deps.peerFor?.(scope) : undefined;
      if (peer) {
        await forward(req, res, peer);
        return;
      }
      req.resume();
      throw new AgentgwError('route_not_found', `No MCP server named "${scope.slice(0, 64)}" is configured: use ${PATH} for every server, or ${PATH}/<server> with a name GET /api/mcp/servers lists.`);
    }
    const named = this.namedTrace(req);
    const headerPolicyId = one(h['x-agent-policy']);
    if (headerPolicyId !== undefined && !ID_PATTERN.test(headerPolicyId)) {
      throw new AgentgwError('invalid_header', 'X-Agent-Policy must be a policy id (lowercase letters, digits, "_" or "-").', { param: 'x-agent-policy' });
    }
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
      req.resume();
      jsonRpcError(res, 405, -32000, 'Method not allowed: /mcp takes POST, GET and DELETE.', { allow: 'GET, POST, DELETE' });
      return;
    }
    const body = req.method === 'POST' ? await this.readBody(req, res) : undefined;
    if (body === NOT_JSON) return;
    // The agent's own upstream credentials (if an admin set some) go with everything this request makes upstream.
    const own = this.deps.credentials ? await this.deps.credentials.of(agent.id) : NO_CREDENTIALS;
    await withAgentCredentials(agent.id, own, () => this.serveSession(req, res, agent, body, scope, named, headerPolicyId));
  }

  private async serveSession(req: IncomingMessage, res: ServerResponse, agent: StoredAgent, body: unknown, scope: string | undefined, named: string | undefined, headerPolicyId: string | undefined): Promise<void> {
    const h = req.headers;
    const sessions = await this.deps.sessions();
    const sid = one(h['mcp-session-id']);
    // A request of the 2026-07-28 revision is answered without a session, by the same handlers (loaded on the first
    // POST outside a session that is not a 2025 initialize: the sessions' requests never wait for it).
    if (sid === undefined && req.method === 'POST' && (!isInitialize(body) || claimsEnvelope(body))) {
      // A load that failed is tried again by the next such request, not kept until a restart.
      const loading = (this.stateless ??= import('./stateless.js').then((m) => new m.StatelessMcp(async () => sessions.federation)));
      loading.catch(() => {
        if (this.stateless === loading) this.stateless = undefined;
      });
      const stateless = await loading;
      if (stateless.claims(req, body)) {
        await stateless.serve(req, res, body, { agent, headerPolicyId, ...(scope !== undefined ? { scope } : {}) }, named);
        return;
      }
    }
    let session: McpSession | null;
    if (sid === undefined) {
      if (!isInitialize(body)) {
        jsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required (send initialize first).', {}, requestIdOf(body));
        return;
      }
      session = await sessions.create(agent.id, body.params?.protocolVersion, scope, body.params?.capabilities);
    } else {
      session = await sessions.find(sid, agent.id, scope);
      if (!session) {
        jsonRpcError(res, 404, -32001, 'Session not found: initialize a new session.', {}, requestIdOf(body));
        return;
      }
    }
    try {
      const caller: McpCaller = { agent, headerPolicyId, traceId: named ?? session.id, sessionId: session.id, ...(scope !== undefined ? { scope } : {}) };
      const response = await session.handle(toWebRequest(req), body, caller);
      const stream = req.method === 'GET' && response.status === 200;
      if (stream) sessions.streamOpened(session);
      try {
        await pipe(response, res);
      } finally {
        if (stream) sessions.streamClosed(session);
      }
    } finally {
      session.leave();
    }
  }

  /** X-Agent-Trace-Id, else x-gateway-trace-id, else an agent client's session header (as /v1); undefined: the MCP session is the trace. */
  private namedTrace(req: IncomingMessage): string | undefined {
    const h = req.headers;
    const agentTrace = one(h['x-agent-trace-id']);
    const gatewayTrace = agentTrace === undefined ? one(h['x-gateway-trace-id']) : undefined;
    const named = agentTrace ?? gatewayTrace;
    if (named !== undefined) {
      if (!TRACE_ID.test(named)) {
        const name = agentTrace !== undefined ? 'X-Agent-Trace-Id' : 'x-gateway-trace-id';
        throw new AgentgwError('invalid_header', `${name} must be 1-128 printable ASCII characters.`, { param: name.toLowerCase() });
      }
      return named;
    }
    for (const name of SESSION_HEADERS) {
      const v = one(h[name]);
      if (v !== undefined && TRACE_ID.test(v)) return v;
    }
    return undefined;
  }

  /** The JSON body, bounded; a body that is not JSON is answered here as the SDK would (JSON-RPC parse error). */
  private readBody(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
    const limit = this.deps.bodyLimit;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      res.setHeader('connection', 'close');
      return Promise.reject(new AgentgwError('body_too_large', 'The request body is too large: send a smaller body.'));
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) {
          req.destroy();
          reject(new AgentgwError('body_too_large', 'The request body is too large: send a smaller body.'));
          return;
        }
        chunks.push(chunk);
      });
      req.on('error', reject);
      req.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          jsonRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON.');
          resolve(NOT_JSON);
        }
      });
    });
  }
}

const NOT_JSON = Symbol('not json');

/** The path is `prefix` or under it (`prefix/...`, `prefix?...`). */
function under(url: string, prefix: string): boolean {
  return url.startsWith(prefix) && (url.length === prefix.length || '/?'.includes(url[prefix.length]!));
}

/** The endpoint a path names: undefined for /mcp (every server), the server's name for /mcp/<server>, null for anything else. */
function scopeOf(path: string): string | undefined | null {
  if (path === PATH || path === `${PATH}/`) return undefined;
  const rest = path.slice(PATH.length + 1).replace(/\/$/, '');
  if (rest === '' || rest.includes('/')) return null;
  try {
    return decodeURIComponent(rest);
  } catch {
    return null;
  }
}


/** Passes the request to the node at `base` and its answer (a stream included) back, until either side ends. */
function forward(req: IncomingMessage, res: ServerResponse, base: string): Promise<void> {
  return new Promise((resolve) => {
    const headers: Record<string, string | string[]> = { [FORWARDED]: '1' };
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && name !== 'connection' && name !== 'keep-alive') headers[name] = value;
    const up = httpRequest(new URL(req.url ?? PATH, base), { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on('end', () => resolve());
      answer.on('error', () => resolve());
    });
    up.on('error', () => {
      if (!res.headersSent) {
        const body = JSON.stringify(new AgentgwError('upstream_unavailable', 'The node that runs this MCP server did not answer: retry in a moment.').toBody());
        res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'retry-after': '1' });
        res.end(body);
      } else if (!res.writableEnded) res.end();
      resolve();
    });
    res.on('close', () => {
      up.destroy();
      resolve();
    });
    req.pipe(up);
  });
}

