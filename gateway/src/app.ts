import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { adminPlugin } from './admin/index.js';
import { answerClientError } from './http/client-error.js';
import { frameworkErrors, registerErrorHandling } from './http/error-handler.js';
import { newRequestId } from './http/request-id.js';
import { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';
import { V1Server } from './data-plane/v1-server.js';
import type { Runtime } from './runtime.js';

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

export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const { services } = opts;
  const common = {
    bodyLimit: services.config.limits.admin_body_bytes,
    genReqId: () => newRequestId(),
    logController: new LogController({ disableRequestLogging: true }),
    // Trace ids may be 128 characters, more once URL-encoded.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
    frameworkErrors,
    clientErrorHandler: answerClientError,
    // /v1 is answered by the data plane's own node:http handler; everything else goes through Fastify.
    serverFactory: (handler: (req: IncomingMessage, res: ServerResponse) => void) => {
      const server = createServer({ ServerResponse: DrainingAwareResponse }, (req, res) => {
        const socket = req.socket;
        busy.set(socket, (busy.get(socket) ?? 0) + 1);
        // The listener holds the socket, never the response: keeping each response in a long-lived set until it
        // closed measured 35-45 us of CPU per request under load (a token in the same set cost nothing).
        res.once('close', () => {
          const n = (busy.get(socket) ?? 1) - 1;
          if (n > 0) busy.set(socket, n);
          else busy.delete(socket);
        });
        if (V1Server.owns(req.url)) v1.handle(req, res);
        else handler(req, res);
      });
      server.keepAliveTimeout = 72_000;
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
  // go at once; requests in flight (streams too) finish and are recorded, then their connections go too.
  const sockets = new Set<Socket>();
  /** Requests in progress per connection (pipelined requests count one each). */
  const busy = new Map<Socket, number>();
  let reaper: NodeJS.Timeout | undefined;
  const reap = () => {
    for (const socket of sockets) if (!busy.has(socket)) socket.destroy();
  };
  const v1 = new V1Server(services.dataPlane, services.config.limits.gateway_body_bytes, opts.logger || undefined);
  const app: FastifyInstance = opts.logger ? Fastify({ ...common, loggerInstance: opts.logger as unknown as FastifyBaseLogger }) : Fastify({ ...common, logger: false });
  app.addHook('preClose', async () => {
    v1.closing = true;
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
  const registry = services.telemetry.metrics.registry;
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => reply.type(registry.contentType).send(await registry.metrics()));
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  return app;
}
