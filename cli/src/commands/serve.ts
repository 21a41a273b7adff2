import { CliError } from '../errors.js';
import { note } from '../ui/messages.js';

export interface ServeFlags {
  config?: string;
  port?: string;
  host?: string;
}

function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new CliError(`--port must be a port number from 0 to 65535, not "${value}"`);
  return n;
}

/** Runs the server until SIGTERM or SIGINT, then closes it (drains requests, flushes usage) and exits 0. */
export async function serveCommand(flags: ServeFlags): Promise<number> {
  const port = parsePort(flags.port);
  // loaded here so the other commands never pay for starting the server's modules
  const { startServer } = await import('@agentgw/gateway');
  let server;
  try {
    server = await startServer({ configPath: flags.config, host: flags.host, port, env: process.env });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE') throw new CliError(`cannot listen: the address is already in use (${err.message.replace(/^.*EADDRINUSE:?\s*/, '')}); pass another --port`);
    throw e;
  }
  note(`agentgw listening: admin ${server.url}/api, gateway ${server.url}/v1`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await server.close();
  return 0;
}
