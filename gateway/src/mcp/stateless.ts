// Requests of the 2026-07-28 revision on /mcp and /mcp/<server>: stateless (no initialize and no session; the protocol
// version, client capabilities and log level travel in each request's `_meta`). The SDK's per-request serving
// (@modelcontextprotocol/server) validates each request (the envelope, the Mcp-Method and Mcp-Name headers, the removed
// methods), answers server/discover and subscriptions/listen, and adds what results of that revision carry (resultType,
// the lists' ttlMs and cacheScope); each request gets a server whose handlers are the sessions' own: Federation's, so
// the same auth (done by the front before), allow-lists, tool rules, PII rules, prices, budgets and trace steps apply
// as to a session's request. An upstream that serves this revision too is reached over it (modern-upstream.ts), the
// others over their sessions.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, McpError, type ProgressToken } from '@modelcontextprotocol/sdk/types.js';
import {
  CLIENT_CAPABILITIES_META_KEY,
  classifyInboundRequest,
  createMcpHandler,
  LOG_LEVEL_META_KEY,
  type McpHttpHandler,
  ProtocolError,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { newRequestId } from '../http/request-id.js';
import { VERSION } from '../version.js';
import { type ClientChannel, withClientChannel } from './client-requests.js';
import type { Federation } from './federation.js';
import { namingOf } from './names.js';
import type { McpCaller } from './tool-call.js';
import { clientCapabilities } from './input-rounds.js';
import { mcpParamDeclarations, mcpParamMismatch } from './mcp-param-headers.js';
import { one, pipe, toWebRequest } from './web-exchange.js';

/** The syslog levels MCP log messages carry, least severe first. */
const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Whether a message of `level` is one a client that set `wanted` hears (false when it set none). */
function atOrAbove(level: unknown, wanted: unknown): boolean {
  const at = LOG_LEVELS.indexOf(level as string);
  const from = LOG_LEVELS.indexOf(wanted as string);
  return at >= 0 && from >= 0 && at >= from;
}

/**
 * A handler whose JSON-RPC errors reach the client with their message as written: the 1.x SDK's McpError (what
 * Federation throws) prefixes it "MCP error <code>: ", and the client's SDK adds its own.
 */
function plain(handler: (...args: never[]) => Promise<unknown>): (...args: never[]) => Promise<unknown> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (e) {
      if (e instanceof McpError) throw new ProtocolError(e.code, e.message.replace(/^MCP error -?\d+: /, ''), e.data);
      throw e;
    }
  };
}

/**
 * The caller the front authenticated, handed through the SDK as the request's auth info, with what of its request goes
 * upstream to a server of this revision: its envelope (capabilities, log level), its answers to an input_required
 * round and that round's state; log messages of the upstream's answer reach it tagged with their server.
 */
function callerOf(ctx: ServerContext): McpCaller {
  const caller = ctx.http?.authInfo?.extra?.caller as McpCaller | undefined;
  if (!caller) throw new Error('a stateless /mcp request reached a handler without its caller');
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const state = ctx.mcpReq.requestState<unknown>();
  return {
    ...caller,
    modern: {
      envelope: { capabilities: clientCapabilities(envelope[CLIENT_CAPABILITIES_META_KEY]), logLevel: envelope[LOG_LEVEL_META_KEY] },
      inputResponses: ctx.mcpReq.inputResponses,
      requestState: typeof state === 'string' ? state : undefined,
      relay: (n, server) => {
        // Log messages only as the client asked for them in its _meta (none without a level, none below it).
        if (n.method !== 'notifications/message' || !n.params || !atOrAbove(n.params.level, envelope[LOG_LEVEL_META_KEY])) return;
        const own = typeof n.params.logger === 'string' ? n.params.logger : undefined;
        const logger = caller.scope !== undefined ? own : own ? `${server}/${own}` : server;
        void ctx.mcpReq.notify({ method: 'notifications/message', params: { ...n.params, ...(logger !== undefined ? { logger } : {}) } as never }).catch(() => undefined);
      },
    },
  };
}

/**
 * Runs an upstream exchange with a signal that follows the request's only until the exchange settles: the SDK aborts a
 * request's signal when its answer has gone, and an upstream must not hear that as a cancellation of what it answered.
 */
async function whileRunning<T>(signal: AbortSignal, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const own = new AbortController();
  const follow = () => own.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  try {
    return await run(own.signal);
  } finally {
    signal.removeEventListener('abort', follow);
  }
}

/**
 * subscriptions/listen streams this node holds open, and for one agent: a new one beyond either ends the oldest (as
 * sessions are pushed out), so that no agent can take every stream of the node from the others.
 */
const MAX_LISTENS = 1024;
const MAX_LISTENS_PER_AGENT = 16;

/** JSON-RPC error of the revision for request headers that disagree with the body (HeaderMismatch). */
const HEADER_MISMATCH = -32020;

/** How long list changes are gathered before the listen streams are told. */
const LIST_CHANGE_GATHER_MS = 50;

/** The revision served here. */
const REVISION = '2026-07-28';

export class StatelessMcp {
  private readonly handler: McpHttpHandler;
  /** The listen streams open, oldest first: how each is ended, and whose it is. */
  private readonly listens = new Map<AbortController, string>();

  constructor(private readonly federation: () => Promise<Federation>) {
    this.handler = createMcpHandler((ctx) => this.server(ctx.authInfo?.extra?.caller as McpCaller | undefined), {
      legacy: 'reject',
      // The bound is this class's (oldest first, per agent); the SDK's own, which refuses, is never the one reached.
      maxSubscriptions: MAX_LISTENS * 2,
    });
    // An upstream's list changes reach the listen streams (each client lists again, under its policies), gathered over
    // 50 ms: a server that reports changes in a burst makes one notice of each kind.
    void federation().then((fed) => {
      fed.upstreams.onListChanged = (_server, kind) => {
        this.changed.add(kind);
        this.flush ??= setTimeout(() => {
          this.flush = undefined;
          for (const k of this.changed) {
            if (k === 'tools') this.handler.notify.toolsChanged();
            else if (k === 'prompts') this.handler.notify.promptsChanged();
            else this.handler.notify.resourcesChanged();
          }
          this.changed.clear();
        }, LIST_CHANGE_GATHER_MS);
        this.flush.unref();
      };
    }, () => undefined);
  }

  private readonly changed = new Set<'tools' | 'prompts' | 'resources'>();
  private flush: NodeJS.Timeout | undefined;

  /**
   * Whether a POST is of the 2026-07-28 revision: the SDK's own classification (a `_meta` protocol version in the body,
   * or the MCP-Protocol-Version header naming it), a malformed claim included (it gets that revision's errors). A request
   * in a session (Mcp-Session-Id) never is.
   */
  claims(req: IncomingMessage, body: unknown): boolean {
    if (req.method !== 'POST' || req.headers['mcp-session-id'] !== undefined) return false;
    const inbound = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: one(req.headers['mcp-protocol-version']),
      mcpMethodHeader: one(req.headers['mcp-method']),
      body,
    });
    return inbound.kind !== 'legacy';
  }

  /** The server one request is answered by: the endpoint's capabilities, Federation's handlers. */
  private async server(caller: McpCaller | undefined): Promise<Server> {
    const fed = await this.federation();
    const offered = await fed.capabilities(true, caller?.scope);
    const s = new Server(
      { name: 'agentgw', version: VERSION },
      {
        capabilities: {
          tools: { listChanged: true },
          resources: { listChanged: true },
          prompts: { listChanged: true },
          ...(offered.completions ? { completions: {} } : {}),
        },
      },
    );
    // Federation's results are the SDK 1.x types; the wire shapes are the same.
    type Any = never;
    const on = ((method: string, handler: (...args: never[]) => Promise<unknown>) => s.setRequestHandler(method as never, plain(handler) as never)) as unknown as Server['setRequestHandler'];
    on('tools/list', async (_r, ctx) => (await fed.listTools(callerOf(ctx))) as Any);
    on('tools/call', async (r, ctx) => {
      const token = r.params._meta?.progressToken as ProgressToken | undefined;
      const onprogress =
        token === undefined
          ? undefined
          : (p: { progress: number; total?: number; message?: string }) => void ctx.mcpReq.notify({ method: 'notifications/progress', params: { ...p, progressToken: token } }).catch(() => undefined);
      const caller = callerOf(ctx);
      // The call runs in a channel of its own, as a session's call does: what its upstream asks of a client (sampling,
      // elicitation) is routed to this call, and refused here (no request reaches a client of this revision), never sent
      // to the client of another call in flight on the same upstream connection.
      const channel: Omit<ClientChannel, 'done'> = {
        ask: (req) => Promise.reject(new McpError(ErrorCode.InvalidRequest, `The client does not support ${req.method} (agentgw relays it only to clients in a session, of revisions before ${REVISION}).`)),
        clean: (answer) => fed.cleanForUpstream(caller, answer),
      };
      // While it runs, what its server logs is not relayed to sessions that are only listening (it may be this call's).
      const server = namingOf(caller.scope).splitName(r.params.name)?.server;
      if (server !== undefined) fed.sessionlessCalls.set(server, (fed.sessionlessCalls.get(server) ?? 0) + 1);
      try {
        return (await withClientChannel(channel, () => whileRunning(ctx.mcpReq.signal, (signal) => fed.callTool(caller, r.params as Any, signal, onprogress)))) as Any;
      } finally {
        if (server !== undefined) {
          const left = (fed.sessionlessCalls.get(server) ?? 1) - 1;
          if (left > 0) fed.sessionlessCalls.set(server, left);
          else fed.sessionlessCalls.delete(server);
        }
      }
    });
    on('resources/list', async (_r, ctx) => (await fed.listResources(callerOf(ctx))) as Any);
    on('resources/templates/list', async (_r, ctx) => (await fed.listResourceTemplates(callerOf(ctx))) as Any);
    on('resources/read', async (r, ctx) => (await whileRunning(ctx.mcpReq.signal, (signal) => fed.readResource(callerOf(ctx), r.params.uri, signal))) as Any);
    on('prompts/list', async (_r, ctx) => (await fed.listPrompts(callerOf(ctx))) as Any);
    on('prompts/get', async (r, ctx) => (await whileRunning(ctx.mcpReq.signal, (signal) => fed.getPrompt(callerOf(ctx), r.params.name, r.params.arguments as Record<string, string> | undefined, signal))) as Any);
    if (offered.completions) on('completion/complete', async (r, ctx) => (await whileRunning(ctx.mcpReq.signal, (signal) => fed.complete(callerOf(ctx), r.params as Any, signal))) as Any);
    return s;
  }

  /**
   * Answers one request. Without a trace named by the client (X-Agent-Trace-Id, ...), the request is its own trace: no
   * session ties it to others.
   */
  async serve(req: IncomingMessage, res: ServerResponse, body: unknown, caller: Pick<McpCaller, 'agent' | 'headerPolicyId' | 'scope'>, named: string | undefined): Promise<void> {
    const id = newRequestId();
    const full: McpCaller = { ...caller, traceId: named ?? id, sessionId: id };
    const abort = new AbortController();
    const gone = () => abort.abort();
    res.once('close', gone);
    const listen = (body as { method?: unknown }).method === 'subscriptions/listen';
    if (await this.refusedParamHeaders(req, res, body, full)) return;
    if (listen) {
      this.admitListen(full.agent.id, abort);
      // The upstreams it hears of are asked once whether they serve this revision, so that their changes are heard.
      void this.federation().then((fed) => {
        for (const u of fed.upstreams.all()) if (fed.sees(full, u.name)) void u.modern().catch(() => undefined);
      }, () => undefined);
    }
    try {
      await this.answer(req, res, body, full, abort.signal);
    } finally {
      res.off('close', gone);
      if (listen) this.listens.delete(abort);
    }
  }

  /**
   * A tools/call whose Mcp-Param-* headers disagree with its arguments (SEP-2243: a header the tool's schema declares,
   * missing, malformed or saying another value) is refused as the revision says, 400 and -32020, before anything else
   * reads it: agentgw sends the upstream headers of its own, built from the arguments its checks read.
   */
  private async refusedParamHeaders(req: IncomingMessage, res: ServerResponse, body: unknown, caller: McpCaller): Promise<boolean> {
    const msg = body as { method?: unknown; id?: unknown; params?: { name?: unknown; arguments?: unknown } };
    if (msg.method !== 'tools/call' || typeof msg.params?.name !== 'string') return false;
    let tool;
    try {
      const fed = await this.federation();
      tool = await fed.toolDefinition({ ...caller, modern: { envelope: { capabilities: {} } } }, msg.params.name);
    } catch {
      // The call itself says why the tool cannot be had.
      return false;
    }
    if (!tool) return false;
    const mismatch = mcpParamMismatch(mcpParamDeclarations(tool.inputSchema), msg.params.arguments, (name) => one(req.headers[name.toLowerCase()]));
    if (mismatch === undefined) return false;
    const error = { code: HEADER_MISMATCH, message: `Bad Request: the request headers and body disagree: ${mismatch}.` };
    res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id ?? null, error }));
    return true;
  }

  /** Makes room for a new listen stream of the agent: its oldest beyond its share, the node's oldest beyond the node's. */
  private admitListen(agentId: string, abort: AbortController): void {
    let mine = 0;
    let oldestMine: AbortController | undefined;
    for (const [stream, owner] of this.listens) {
      if (owner !== agentId) continue;
      oldestMine ??= stream;
      mine++;
    }
    if (oldestMine && mine >= MAX_LISTENS_PER_AGENT) this.endListen(oldestMine);
    if (this.listens.size >= MAX_LISTENS) this.endListen(this.listens.keys().next().value!);
    this.listens.set(abort, agentId);
  }

  private endListen(stream: AbortController): void {
    this.listens.delete(stream);
    stream.abort();
  }

  private async answer(req: IncomingMessage, res: ServerResponse, body: unknown, full: McpCaller, signal: AbortSignal): Promise<void> {
    const request = toWebRequest(req, { method: 'POST', body: JSON.stringify(body), signal });
    const response = await this.handler.fetch(request, { parsedBody: body, authInfo: { token: '', clientId: full.agent.id, scopes: [], extra: { caller: full } } });
    await pipe(response, res);
  }

  /** Ends the exchanges in flight (streams included). */
  close(): Promise<void> {
    return this.handler.close();
  }
}

