// One MCP session on this node. Between requests a session is a small record (id, agent, last use: a few hundred bytes);
// the MCP SDK's Server and Streamable HTTP transport (several KB) exist only while the session is in use or among the
// most recently used, and are rebuilt by replaying the handshake when it is used again, as a node that never held the
// session re-creates it from its id. JSON-RPC ids of the requests in flight are held here: the SDK keys its answer
// streams by id, so a repeated id would take over the first request's stream and that request would never be answered.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  GetPromptRequestSchema,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCNotification,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type Progress,
  type ProgressToken,
  type LoggingLevel,
  type LoggingMessageNotification,
  ReadResourceRequestSchema,
  type ServerCapabilities,
  type ServerNotification,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ProgressCallback, RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { VERSION } from '../version.js';
import { type ClientChannel, withClientChannel } from './client-requests.js';
import { SessionEventStore, SSE_RETRY_MS } from './event-store.js';
import { type Federation, toolsSignature } from './federation.js';
import { federatedUri, namingOf } from './names.js';
import { SessionBus } from './session-bus.js';
import { SessionIds } from './session-ids.js';
import type { McpCaller } from './tool-call.js';

/** The address the transport sees on requests this node makes to itself (re-creating a session). */
const SELF_URL = 'http://agentgw.internal/mcp';

type RequestId = string | number;
type Extra = RequestHandlerExtra<never, never>;

// The SDK's Server builds its own Ajv (about 20 KB and 1 ms) for elicitation answers unless given one; /mcp sends no
// elicitation of its own, so every session shares one, built if ever needed.
let ajv: AjvJsonSchemaValidator | undefined;
const sharedValidator: jsonSchemaValidator = { getValidator: (schema) => (ajv ??= new AjvJsonSchemaValidator()).getValidator(schema) };

/**
 * The client asked for progress (`_meta.progressToken`): the upstream's progress notifications of the call go to it under
 * its own token, on the call's stream (so they reach it whichever node serves the call).
 */
function relayProgress(token: ProgressToken | undefined, send: (n: ServerNotification) => Promise<void>): ProgressCallback | undefined {
  if (token === undefined) return undefined;
  return (p: Progress) => void send({ method: 'notifications/progress', params: { ...p, progressToken: token } }).catch(() => undefined);
}

/** The caller of one request, as the /mcp front handed it to the transport. */
function callerOf(extra: { authInfo?: { extra?: Record<string, unknown> } }): McpCaller {
  const caller = extra.authInfo?.extra?.caller as McpCaller | undefined;
  if (!caller) throw new Error('an /mcp request reached a handler without its caller');
  return caller;
}

/** What the registry of sessions (sessions.ts) does for a session. */
export interface SessionOwner {
  readonly federation: Federation;
  /** The session has nothing in flight on this node: it may lose its SDK objects. */
  idle(s: McpSession): void;
  /** The session is in use again. */
  busy(s: McpSession): void;
  /** Its client ended it (DELETE). */
  deleted(s: McpSession): void;
  /**
   * The level to set on the upstreams: the most verbose any session of this node asked for (their connections are the
   * node's, shared by its sessions; each session gets only what its own level lets through).
   */
  upstreamLogLevel?(): LoggingLevel | undefined;
  /** How the nodes reach each other about a session (a client's answer POSTed to another node than the asking one). */
  readonly bus?: SessionBus;
}

/** The SDK objects of a session in use: a Server with the federated handlers, connected to its own transport. */
export class SessionProtocol {
  readonly server: Server;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  /** The caller of the latest request: whose policies decide what notifications say. */
  caller: McpCaller | undefined;
  /** What the session was last shown (tool names; servers whose resources and prompts it sees). */
  told: { tools?: string | null; servers?: string | null } = {};
  /** JSON-RPC ids of requests handed to the transport and not answered yet. */
  readonly pending = new Set<RequestId>();
  /** The tools/call requests in flight, by JSON-RPC id: the server each calls (its log messages go on the call's stream). */
  readonly calls = new Map<RequestId, string>();
  /** The SDK's ids of the requests sent to the client (sampling, elicitation) and not answered yet. */
  private readonly asked = new Set<number>();

  constructor(
    readonly id: string,
    federation: Federation,
    onSettled: () => void,
    onDeleted: () => void,
    /** What the upstreams offer besides tools, resources and prompts (logging), and where a client's log level is kept. */
    upstreamCapabilities: ServerCapabilities = {},
    /** Keeps the client's level and says which level the upstreams get. */
    onLevel: (level: LoggingLevel) => LoggingLevel = (level) => level,
    /** Requests to the client go out with ids naming this node, so that its answer finds it from any node. */
    private readonly bus?: SessionBus,
  ) {
    this.server = new Server(
      { name: 'agentgw', version: VERSION },
      {
        capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true }, ...upstreamCapabilities },
        jsonSchemaValidator: sharedValidator,
      },
    );
    const s = this.server;
    if (upstreamCapabilities.completions) {
      s.setRequestHandler(CompleteRequestSchema, (req, extra) => federation.complete(callerOf(extra), req.params, extra.signal));
    }
    if (upstreamCapabilities.resources?.subscribe) {
      s.setRequestHandler(SubscribeRequestSchema, async (req, extra) => {
        await federation.subscribe(callerOf(extra), req.params.uri, extra.signal);
        return {};
      });
      s.setRequestHandler(UnsubscribeRequestSchema, async (req, extra) => {
        // Subscriptions are held under the federated URI, whichever endpoint named the resource.
        const split = namingOf(callerOf(extra).scope).splitUri(req.params.uri);
        await federation.unsubscribe(id, split ? federatedUri(split.server, split.uri) : req.params.uri);
        return {};
      });
    }
    if (upstreamCapabilities.logging) {
      s.setRequestHandler(SetLevelRequestSchema, async (req, extra) => {
        await federation.setLoggingLevel(callerOf(extra), onLevel(req.params.level), extra.signal);
        return {};
      });
    }
    s.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => {
      const result = await federation.listTools(callerOf(extra));
      this.told.tools = toolsSignature(result.tools);
      return result;
    });
    s.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const server = namingOf(callerOf(extra).scope).splitName(req.params.name)?.server;
      if (server !== undefined) this.calls.set(extra.requestId, server);
      try {
        const caller = callerOf(extra);
        // Sampling and elicitation the upstream asks for while it runs the call go to this client, on this call's stream.
        const channel: Omit<ClientChannel, 'done'> = {
          ask: (r, schema, options) => {
            // Never a request the client did not declare it takes (the spec's rule for servers): the upstream hears why.
            const capability = r.method === 'sampling/createMessage' ? 'sampling' : r.method === 'elicitation/create' ? 'elicitation' : undefined;
            if (capability && !this.server.getClientCapabilities()?.[capability]) {
              return Promise.reject(new McpError(ErrorCode.InvalidRequest, `The client does not support ${capability} (it did not declare the capability).`));
            }
            return extra.sendRequest(r, schema, options);
          },
          clean: (answer) => federation.cleanForUpstream(caller, answer),
        };
        return await withClientChannel(channel, () =>
          federation.callTool(caller, req.params, (extra as Extra).signal, relayProgress(req.params._meta?.progressToken, extra.sendNotification)),
        );
      } finally {
        this.calls.delete(extra.requestId);
      }
    });
    s.setRequestHandler(ListResourcesRequestSchema, async (_req, extra) => {
      const caller = callerOf(extra);
      this.told.servers = federation.visibleServers(caller);
      return federation.listResources(caller);
    });
    s.setRequestHandler(ListResourceTemplatesRequestSchema, (_req, extra) => federation.listResourceTemplates(callerOf(extra)));
    s.setRequestHandler(ReadResourceRequestSchema, (req, extra) => federation.readResource(callerOf(extra), req.params.uri, extra.signal));
    s.setRequestHandler(ListPromptsRequestSchema, async (_req, extra) => {
      const caller = callerOf(extra);
      this.told.servers = federation.visibleServers(caller);
      return federation.listPrompts(caller);
    });
    s.setRequestHandler(GetPromptRequestSchema, (req, extra) => federation.getPrompt(callerOf(extra), req.params.name, req.params.arguments, extra.signal));
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessionclosed: onDeleted,
      // SSE answers start with a priming event (id, empty data, retry) for clients of 2025-11-25 and later, so a broken
      // stream can be resumed with Last-Event-ID.
      eventStore: new SessionEventStore(),
      retryInterval: SSE_RETRY_MS,
    });
    // An answer sent (or dropped because its stream is gone) settles its id; a request cancelled is settled by the front.
    const send = transport.send.bind(transport);
    transport.send = async (message: JSONRPCMessage, options) => {
      try {
        await send(this.outgoing(isJSONRPCErrorResponse(message) ? unprefixed(message) : message), options);
      } finally {
        const answered = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message) ? message.id : undefined;
        if (answered !== undefined && this.pending.delete(answered)) onSettled();
      }
    };
    this.transport = transport;
  }

  /**
   * A request to the client goes out with an id naming this node (`agentgw-<node>-<n>`): unique among the nodes, which
   * each count their own, and telling the node the client's answer lands on where to send it (see session-bus.ts).
   */
  private outgoing(message: JSONRPCMessage): JSONRPCMessage {
    if (!this.bus) return message;
    if ('method' in message && 'id' in message && typeof message.id === 'number') {
      this.asked.add(message.id);
      return { ...message, id: this.bus.tag(message.id) };
    }
    // The SDK gave up on one (timeout, or the call ended): its cancellation names the id the client knows.
    if ('method' in message && message.method === 'notifications/cancelled' && !('id' in message)) {
      const target = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof target === 'number' && this.asked.delete(target)) return { ...message, params: { ...message.params, requestId: this.bus.tag(target) } };
    }
    return message;
  }

  /** A client's answer (here or from another node) to a request this node sent: with the SDK's own id again. */
  private incoming(message: JSONRPCMessage): JSONRPCMessage {
    if (!this.bus || 'method' in message || !('id' in message)) return message;
    const tagged = SessionBus.untag(message.id);
    if (!tagged || tagged.node !== this.bus.node || !this.asked.delete(tagged.id)) return message;
    return { ...message, id: tagged.id };
  }

  /** Whether the answer is to a request this node sent the client and is waiting for. */
  awaits(id: unknown): boolean {
    const tagged = SessionBus.untag(id);
    return tagged !== undefined && tagged.node === this.bus?.node && this.asked.has(tagged.id);
  }

  /** A client's answer that another node received: handed to the SDK as if POSTed here. */
  deliver(message: JSONRPCMessage): void {
    this.transport.onmessage?.(message);
  }

  /** Connects the server to its transport and, for a session made earlier, replays its initialisation. */
  async open(replayVersion?: string): Promise<void> {
    await this.server.connect(this.transport);
    const onmessage = this.transport.onmessage;
    if (onmessage) this.transport.onmessage = (message, extra) => onmessage(this.incoming(message), extra);
    if (replayVersion === undefined) return;
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const init = {
      jsonrpc: '2.0' as const,
      id: 'agentgw-restore',
      method: 'initialize',
      // What the client declared it takes, as its id carries it: it is asked for sampling and elicitation from any node.
      params: { protocolVersion: replayVersion, capabilities: SessionIds.clientCapabilitiesOf(this.id), clientInfo: { name: 'agentgw-restored-session', version: VERSION } },
    };
    const initialized = { jsonrpc: '2.0' as const, method: 'notifications/initialized' };
    const withSession = { ...headers, 'mcp-session-id': this.id, 'mcp-protocol-version': replayVersion };
    for (const [h, body] of [[headers, init], [withSession, initialized]] as const) {
      const res = await this.transport.handleRequest(new Request(SELF_URL, { method: 'POST', headers: h }), { parsedBody: body });
      const text = await res.text();
      if (!res.ok) throw new Error(`re-creating MCP session failed: ${res.status} ${text.slice(0, 200)}`);
    }
  }

  /**
   * A log message of an upstream, tagged with its server (`logger: "<server>"` or `"<server>/<logger>"`): on the stream of
   * a call to that server in flight, else on the notification stream (none open: dropped, as the spec allows).
   */
  relayLog(server: string, params: LoggingMessageNotification['params'], level: LoggingLevel | undefined): void {
    if (level !== undefined && LOG_LEVELS.indexOf(params.level) < LOG_LEVELS.indexOf(level)) return;
    // /mcp/<server> names things as the upstream does; /mcp says which server spoke.
    const logger = this.caller?.scope !== undefined ? params.logger : params.logger ? `${server}/${params.logger}` : server;
    let related: RequestId | undefined;
    for (const [id, s] of this.calls) if (s === server) related = id;
    void this.server
      .notification({ method: 'notifications/message', params: { ...params, logger } }, related !== undefined ? { relatedRequestId: related } : undefined)
      .catch(() => undefined);
  }

  close(): void {
    this.pending.clear();
    void this.server.close().catch(() => undefined);
  }
}

export class McpSession {
  lastSeen = Date.now();
  /** The log level the client set (logging/setLevel) on this node: messages below it are not sent. */
  logLevel: LoggingLevel | undefined;
  /** Notification (GET) streams open on this node. */
  streams = 0;
  /** HTTP requests of this session being answered on this node. */
  private exchanges = 0;
  private live: SessionProtocol | undefined;
  private waking: Promise<SessionProtocol> | undefined;
  ended = false;

  constructor(
    readonly id: string,
    readonly agentId: string,
    private readonly owner: SessionOwner,
    /** The one server it serves (a session of /mcp/<server>), else undefined (/mcp). */
    readonly scope?: string,
  ) {}

  /** The SDK objects, while the session holds them. */
  get protocol(): SessionProtocol | undefined {
    return this.live;
  }

  /** Something of the session is under way on this node: an HTTP request, an unanswered JSON-RPC request, a rebuild. */
  get busy(): boolean {
    return this.exchanges > 0 || (this.live !== undefined && this.live.pending.size > 0) || this.waking !== undefined;
  }

  /** An HTTP request of the session starts; leave() when its answer has ended. */
  enter(): void {
    if (this.exchanges++ === 0) this.owner.busy(this);
  }

  leave(): void {
    this.exchanges--;
    this.settled();
  }

  /** A new session: its SDK objects are made now and see the client's own initialize. */
  async start(): Promise<void> {
    const p = this.build(await this.owner.federation.capabilities(true, this.scope));
    this.live = p;
    await p.open();
  }

  /**
   * Hands one HTTP request to the session's transport (rebuilding it first when the session was put down). A POST that
   * repeats the id of a request still in flight, or an id twice, is refused at once with a JSON-RPC error.
   */
  async handle(request: Request, body: unknown, caller: McpCaller): Promise<Response> {
    const { ids, cancelled } = idsOf(body);
    if (this.ended) return Response.json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: ids.length === 1 ? ids[0] : null }, { status: 404 });
    // The client's answers to requests another node sent it go to that node; what remains is served here.
    const rest = this.forwardAnswers(body);
    if (rest === FORWARDED) return new Response(null, { status: 202 });
    body = rest;
    const p = this.live ?? (await this.wake());
    p.caller = caller;
    const repeated = ids.find((id, i) => p.pending.has(id) || ids.indexOf(id) !== i);
    if (repeated !== undefined) {
      const message = `Invalid Request: id ${JSON.stringify(repeated)} is already used by a request in flight in this session; give each request its own id.`;
      return Response.json({ jsonrpc: '2.0', error: { code: -32600, message }, id: null }, { status: 400 });
    }
    for (const id of ids) p.pending.add(id);
    let response: Response;
    try {
      response = await p.transport.handleRequest(request, { parsedBody: body, authInfo: { token: '', clientId: this.agentId, scopes: [], extra: { caller } } });
    } catch (e) {
      this.settle(p, ids);
      throw e;
    }
    // Not taken (refused before dispatch): no answer will come for these ids. A cancelled request gets no answer either.
    if (response.status !== 200) this.settle(p, ids);
    this.settle(p, cancelled.filter((id) => !ids.includes(id)));
    return response;
  }

  /**
   * Sends each JSON-RPC answer in the body to the node whose request it answers (its id names the node), when that is
   * another node, and each cancellation of a request not running here to every node; the body without the answers
   * sent, or FORWARDED when nothing is left.
   */
  private forwardAnswers(body: unknown): unknown {
    const bus = this.owner.bus;
    if (!bus?.shared) return body;
    const messages = Array.isArray(body) ? body : [body];
    // A cancellation of a request not running here: the node running it cancels it (this one has nothing to cancel).
    for (const m of messages) {
      if (typeof m !== 'object' || m === null || (m as { method?: unknown }).method !== 'notifications/cancelled') continue;
      const target = (m as { params?: { requestId?: unknown } }).params?.requestId;
      if ((typeof target === 'string' || typeof target === 'number') && !this.live?.pending.has(target)) bus.sendCancel(this.id, m as JSONRPCNotification);
    }
    const rest = messages.filter((m) => {
      if (typeof m !== 'object' || m === null || 'method' in m || !('result' in m || 'error' in m)) return true;
      const to = SessionBus.untag((m as { id?: unknown }).id);
      return !to || to.node === bus.node || !bus.sendAnswer(to.node, this.id, m as JSONRPCMessage);
    });
    if (rest.length === messages.length) return body;
    if (rest.length === 0) return FORWARDED;
    return Array.isArray(body) ? rest : rest[0];
  }

  /** The client cancelled, through another node, a request of the session: cancelled here when it runs here. */
  cancelledElsewhere(notification: JSONRPCNotification): void {
    const p = this.live;
    const target = (notification.params as { requestId?: unknown } | undefined)?.requestId;
    if (!p || (typeof target !== 'string' && typeof target !== 'number') || !p.pending.has(target)) return;
    p.deliver(notification);
    // No answer will come for it (as for a cancellation POSTed here).
    this.settle(p, [target]);
  }

  /** Drops the SDK objects (streams still open end); the session goes on and is rebuilt on its next request. */
  putDown(): void {
    const p = this.live;
    // Idle, nothing is attached to them (no stream, no timer): closing would only build the SDK's "Connection closed" error.
    if (p && this.busy) p.close();
    this.live = undefined;
  }

  /** The session has ended on this node: a request with its id gets 404 from now on. */
  end(): void {
    this.ended = true;
    this.putDown();
  }

  private settle(p: SessionProtocol, ids: readonly RequestId[]): void {
    let changed = false;
    for (const id of ids) changed = p.pending.delete(id) || changed;
    if (changed) this.settled();
  }

  private settled(): void {
    if (!this.busy) this.owner.idle(this);
  }

  private build(capabilities: ServerCapabilities): SessionProtocol {
    return new SessionProtocol(
      this.id,
      this.owner.federation,
      () => this.settled(),
      () => this.owner.deleted(this),
      capabilities,
      (level) => {
        this.logLevel = level;
        return this.owner.upstreamLogLevel?.() ?? level;
      },
      this.owner.bus,
    );
  }

  /** Rebuilds the SDK objects; concurrent requests of the session share one rebuild. */
  private wake(): Promise<SessionProtocol> {
    this.waking ??= (async () => {
      // The same capabilities on every node: the upstreams are connected first, as for the client's initialize.
      const p = this.build(await this.owner.federation.capabilities(true, this.scope));
      try {
        await p.open(SessionIds.protocolVersionOf(this.id));
      } catch (e) {
        p.close();
        throw e;
      }
      // Ended meanwhile: the closed transport answers 404 as for any ended session.
      if (this.ended) p.close();
      else this.live = p;
      return p;
    })().finally(() => {
      this.waking = undefined;
    });
    return this.waking;
  }
}

const FORWARDED = Symbol('forwarded');

/** Log levels, least severe first. */
export const LOG_LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** The SDK's McpError says "MCP error <code>: " before its text, and a client adds it again: the error goes out without it. */
const SDK_PREFIX = /^(?:MCP error -?\d+: )+/;

function unprefixed<M extends { error: { message: string } }>(m: M): M {
  return SDK_PREFIX.test(m.error.message) ? { ...m, error: { ...m.error, message: m.error.message.replace(SDK_PREFIX, '') } } : m;
}

/** The ids of the JSON-RPC requests in a POST body (one message or a batch), and those a cancellation names. */
function idsOf(body: unknown): { ids: RequestId[]; cancelled: RequestId[] } {
  const ids: RequestId[] = [];
  const cancelled: RequestId[] = [];
  for (const m of Array.isArray(body) ? body : [body]) {
    if (typeof m !== 'object' || m === null || typeof (m as { method?: unknown }).method !== 'string') continue;
    const { id, method, params } = m as { id?: unknown; method: string; params?: { requestId?: unknown } };
    if (typeof id === 'string' || typeof id === 'number') ids.push(id);
    else if (method === 'notifications/cancelled') {
      const target = params?.requestId;
      if (typeof target === 'string' || typeof target === 'number') cancelled.push(target);
    }
  }
  return { ids, cancelled };
}
