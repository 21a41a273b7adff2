import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { adminPlugin } from './admin/index.js';
import { metricsRoute } from './admin/metrics.js';
import { answerClientError, answerOnSocket } from './http/client-error.js';
import { AgentgwError } from './contract/index.js';
import { frameworkErrors, registerErrorHandling } from './http/error-handler.js';
import { newRequestId } from './http/request-id.js';
import { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';
import { V1Server } from './data-plane/v1-server.js';
import { McpGateway } from './mcp/mcp-gateway.js';
import type { Runtime } from './runtime.js';
import { consolePlugin, rootRoute } from './ui/serve-console.js';

export interface AppOptions {
  services: Runtime;
  /** A pino logger, or false for none (tests). */
  logger?: Logger | false;
}

/** Secrets never reach a log line. */
export const LOG_REDACT = [
  'req.headers.authorization',
  'req.headers["api-key"]',
  'req.headers["x-api-key"]',
  'req.headers["x-goog-api-key"]',
  'api_key',
  '*.api_key',
  'apiKey',
];

/** HTTP/1.1 requires a Host header: the request is answered as bad, with CONTRACT's body, and its connection closed. */
function missingHost(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  const body = JSON.stringify(new AgentgwError('invalid_header', 'The request has no Host header, which HTTP/1.1 requires: send one.', { param: 'host' }).toBody());
  res.writeHead(400, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'x-request-id': newRequestId(), connection: 'close' });
  res.end(body);
}

export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const { services } = opts;
  const limits = services.config.limits;
  const common = {
    bodyLimit: limits.admin_body_bytes,
    genReqId: () => newRequestId(),
    logController: new LogController({ disableRequestLogging: true }),
    // Trace ids may be 128 characters, more once URL-encoded.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
    frameworkErrors,
    clientErrorHandler: answerClientError,
    // /v1 is answered by the data plane's own node:http handler; everything else goes through Fastify.
    serverFactory: (handler: (req: IncomingMessage, res: ServerResponse) => void) => {
      // Host is checked here, so a request without one gets CONTRACT's body (Node's own check answers an empty 400).
      const serverOptions = {
        ServerResponse: DrainingAwareResponse,
        requireHostHeader: false,
        // Both count only while a request comes in: its answer, a 10-minute stream say, is timed by neither.
        headersTimeout: limits.headers_timeout_s * 1000,
        requestTimeout: limits.request_timeout_s * 1000,
        // How often Node looks for requests past those timeouts (its default, 30 s, would let them run that much longer).
        connectionsCheckingInterval: Math.min(1000, limits.headers_timeout_s * 250),
      };
      const server = createServer(serverOptions, (req, res) => {
        const socket = req.socket;
        busy.set(socket, (busy.get(socket) ?? 0) + 1);
        // The listener holds the socket, never the response: keeping each response in a long-lived set until it
        // closed measured 35-45 us of CPU per request under load (a token in the same set cost nothing).
        res.once('close', () => {
          const n = (busy.get(socket) ?? 1) - 1;
          if (n > 0) busy.set(socket, n);
          else busy.delete(socket);
        });
        if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) missingHost(req, res);
        else if (V1Server.owns(req.url)) v1.handle(req, res);
        else if (McpGateway.owns(req.url)) services.mcp.handle(req, res);
        else handler(req, res);
      });
      // Other nodes learn where this one serves its MCP servers (multi-node, Redis).
      server.once('listening', () => services.mcp.listening(server.address()));
      // Node hands CONNECT to no request handler and drops the connection unanswered; it gets an answer here.
      server.on('connect', (req: IncomingMessage, socket: Socket) => {
        answerOnSocket(socket, 404, new AgentgwError('route_not_found', `No route CONNECT ${req.url ?? ''}: agentgw is not a forward proxy; send requests to /v1 or /api.`));
      });
      server.keepAliveTimeout = limits.keep_alive_timeout_s * 1000;
      // Past the cap, Node closes a new connection at once; the client retries (another node, or this one later).
      server.maxConnections = limits.max_connections;
      // Closing drops idle connections at once (Node's close(), Fastify's forceCloseConnections): one a client has just
      // sent a request on would be reset. The reaper below closes them instead, once they have stayed idle.
      server.closeIdleConnections = () => undefined;
      server.on('connection', (socket: Socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      });
      return server;
    },
  };
  /** Once shutdown has begun, every answer whose headers are not yet sent tells the client not to reuse the connection. */
  class DrainingAwareResponse extends ServerResponse {
    override writeHead(statusCode: number, statusMessage?: string, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
    override writeHead(statusCode: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
    override writeHead(...args: [number, ...unknown[]]): this {
      if (v1.closing) this.shouldKeepAlive = false;
      return super.writeHead(...(args as [number]));
    }
  }
  // On close, connections without a request in progress (idle keep-alive ones, and ones a client opened but never used)
  // go once they have stayed idle from one reap to the next: a request a client sent on one just as shutdown began is
  // answered (503, connection: close), not reset. Requests in flight (streams too) finish and are recorded, then their
  // connections go too.
  const sockets = new Set<Socket>();
  /** Requests in progress per connection (pipelined requests count one each). */
  const busy = new Map<Socket, number>();
  let reaper: NodeJS.Timeout | undefined;
  /** Bytes each idle connection had read at the last reap. */
  let idleAt = new Map<Socket, number>();
  const reap = () => {
    const next = new Map<Socket, number>();
    for (const socket of sockets) {
      if (busy.has(socket)) continue;
      if (idleAt.get(socket) === socket.bytesRead) socket.destroy();
      else next.set(socket, socket.bytesRead);
    }
    idleAt = next;
  };
  const v1 = new V1Server(services.dataPlane, limits.body_bytes, opts.logger || undefined);
  const app: FastifyInstance = opts.logger ? Fastify({ ...common, loggerInstance: opts.logger as unknown as FastifyBaseLogger }) : Fastify({ ...common, logger: false });
  app.addHook('preClose', async () => {
    v1.closing = true;
    // Calls held for approval would keep the drain waiting for a person (up to approvals.timeout_s): they are abandoned
    // now, refused to their clients naming the approval, and their requests then finish like any other.
    await services.dataPlane.approvals?.drain();
    // MCP notification streams stay open until their session ends: end them, or their connections would hold the close.
    await services.mcp.drain();
    reap();
    reaper = setInterval(reap, 50);
    reaper.unref();
  });
  app.addHook('onClose', async () => {
    clearInterval(reaper);
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'agentgw admin interface', version: services.version },
      servers: [{ url: '/api' }],
      components: { securitySchemes: { adminKey: { type: 'http', scheme: 'bearer' } } },
      security: [{ adminKey: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(adminPlugin, { prefix: '/api', services });
  await app.register(consolePlugin, { enabled: services.config.console.enabled });
  rootRoute(app, services.config.console.enabled);
  // With an address of its own (server.ts listens there), /metrics is not served here.
  if (!services.config.metrics.listen) {
    metricsRoute(app, { hasher: services.hasher, store: services.store, registry: services.telemetry.metrics.registry, requireKey: services.config.metrics.require_key });
  }
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  return app;
}
