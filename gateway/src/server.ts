import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { metricsApp } from './admin/metrics.js';
import { LOG_REDACT, buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
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
  /** http://HOST:PORT of /metrics when `metrics.listen` gives it an address of its own, else null. */
  metricsUrl: string | null;
  /** http://HOST:PORT/ui when the console is enabled (console.enabled), else null. */
  consoleUrl: string | null;
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
  const metrics = config.metrics.listen
    ? metricsApp({ hasher: runtime.hasher, store: runtime.store, registry: runtime.telemetry.metrics.registry, requireKey: config.metrics.require_key })
    : null;
  try {
    await app.listen({ host, port });
  } catch (e) {
    await runtime.close();
    throw e;
  }
  if (metrics) {
    const [metricsHost, metricsPort] = splitListen(config.metrics.listen!);
    try {
      await metrics.listen({ host: metricsHost, port: metricsPort });
    } catch (e) {
      await app.close();
      await runtime.close();
      const err = e as NodeJS.ErrnoException;
      throw new ConfigError(`config metrics.listen: cannot listen on ${config.metrics.listen} (${err.code ?? err.message}); choose another address or port`);
    }
  }
  let closing: Promise<void> | undefined;
  return {
    url: urlOf(app, host, port),
    metricsUrl: metrics ? urlOf(metrics, splitListen(config.metrics.listen!)[0], 0) : null,
    consoleUrl: config.console.enabled ? `${urlOf(app, host, port)}/ui` : null,
    app,
    generatedAdminKey: runtime.generatedAdminKey,
    close() {
      closing ??= (async () => {
        await metrics?.close();
        await app.close();
        await runtime.close();
      })();
      return closing;
    },
  };
}

function urlOf(app: FastifyInstance, host: string, port: number): string {
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`;
}

function splitListen(listen: string): [string, number] {
  const i = listen.lastIndexOf(':');
  return [listen.slice(0, i).replace(/^\[|\]$/g, ''), Number(listen.slice(i + 1))];
}
