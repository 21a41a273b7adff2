import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { LOG_REDACT, buildApp } from './app.js';
import { loadConfig } from './config.js';
import { createRuntime } from './runtime.js';

export interface StartOptions {
  configPath?: string;
  host?: string;
  port?: number;
  env?: NodeJS.ProcessEnv;
}

export interface RunningServer {
  /** http://HOST:PORT */
  url: string;
  app: FastifyInstance;
  generatedAdminKey: string | null;
  close(): Promise<void>;
}

/** Loads the config, opens storage, and listens. `close()` drains requests and flushes records. */
export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const env = opts.env ?? process.env;
  const config = loadConfig({ path: opts.configPath, env });
  const logger = pino({ level: config.log_level, redact: { paths: LOG_REDACT, censor: '[redacted]' } });
  const runtime = await createRuntime(config, { env, log: logger });
  const app = await buildApp({ services: runtime, logger });
  const [defaultHost, defaultPort] = splitListen(config.listen);
  const host = opts.host ?? defaultHost;
  const port = opts.port ?? defaultPort;
  try {
    await app.listen({ host, port });
  } catch (e) {
    await runtime.close();
    throw e;
  }
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${boundPort}`,
    app,
    generatedAdminKey: runtime.generatedAdminKey,
    close() {
      closing ??= (async () => {
        await app.close();
        await runtime.close();
      })();
      return closing;
    },
  };
}

function splitListen(listen: string): [string, number] {
  const i = listen.lastIndexOf(':');
  return [listen.slice(0, i).replace(/^\[|\]$/g, ''), Number(listen.slice(i + 1))];
}
