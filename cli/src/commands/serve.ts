import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { note } from '../ui/messages.js';

export interface ServeFlags {
  config?: string;
  port?: string;
  host?: string;
}

/** The server configuration's defaults (gateway/src/config.ts) that `serve --help` names; serve.test.ts holds them equal. */
export const SERVE_DEFAULTS = { host: '127.0.0.1', port: 8080, sqlitePath: './data/agentgw.db' } as const;

/** The defaults of `limits:` and `mcp:` that `serve --help` lists; serve.test.ts holds them equal to the config's. */
export const SERVE_LIMITS = {
  body_mb: 10,
  upstream_body_mb: 32,
  headers_timeout_s: 60,
  request_timeout_s: 300,
  keep_alive_timeout_s: 72,
  max_connections: 4096,
  pii_scan_bytes: 8388608,
  db_timeout_ms: 5000,
  redis_timeout_ms: 1000,
  redis_breaker_failures: 5,
  mcp_sessions: 10000,
  mcp_sessions_per_agent: 1000,
  session_idle_s: 3600,
} as const;

/** The defaults of `approvals:` that `serve --help` lists; serve.test.ts holds them equal to the config's. */
export const SERVE_APPROVALS = { timeout_s: 300, keep_alive_s: 5 } as const;

/** `key: default` and what it means, in two columns. */
function row(key: string, ...lines: string[]): string {
  return lines.map((line, i) => `${i === 0 ? `    ${key}`.padEnd(30) : ' '.repeat(30)}${line}`).join('\n');
}

const LIMIT_ROWS = [
  row(`body_mb: ${SERVE_LIMITS.body_mb}`, 'largest /v1 and /mcp request body (gateway_body_bytes, in bytes,', 'still works)'),
  row(`upstream_body_mb: ${SERVE_LIMITS.upstream_body_mb}`, 'largest upstream answer, or one event of its stream: past it the', 'client gets 502 upstream_bad_response and the upstream connection', 'is dropped'),
  row(`headers_timeout_s: ${SERVE_LIMITS.headers_timeout_s}`, "time a client has to send a request's headers (then 408)"),
  row(`request_timeout_s: ${SERVE_LIMITS.request_timeout_s}`, 'time a client has to send a whole request, headers and body; the', 'answer is not timed, so a stream may run as long as the model writes'),
  row(`keep_alive_timeout_s: ${SERVE_LIMITS.keep_alive_timeout_s}`, 'an idle client connection is closed after this; keep it above your', "load balancer's idle timeout (60 s on many)"),
  row(`max_connections: ${SERVE_LIMITS.max_connections}`, 'client connections at once (a stream holds one); more are closed at', 'once and clients retry; keep it below the open-file limit (ulimit -n)'),
  row(`pii_scan_bytes: ${SERVE_LIMITS.pii_scan_bytes}`, "UTF-8 bytes of text a request's PII rules may read (8 MiB; parts", 'sent before count too); past it 413 body_too_large, never unscanned'),
  row(`db_timeout_ms: ${SERVE_LIMITS.db_timeout_ms}`, 'deadline of every database call (waiting for a connection, then its', 'statements); past it the request gets 503 store_unavailable'),
  row(`redis_timeout_ms: ${SERVE_LIMITS.redis_timeout_ms}`, 'longest wait for one Redis counters command; past it the request', 'that needs counters is 503 store_unavailable (a busy event loop does', 'not count)'),
  row(`redis_breaker_failures: ${SERVE_LIMITS.redis_breaker_failures}`, 'Redis failures in a row after which such requests are refused at once', 'for a second, then one probe tries Redis again'),
  row(`mcp_sessions: ${SERVE_LIMITS.mcp_sessions}`, 'MCP sessions one node holds (an idle one takes about 0.7 KB); past it', 'the longest unused ends: its id is a 404 and the client starts anew'),
  row(`mcp_sessions_per_agent: ${SERVE_LIMITS.mcp_sessions_per_agent}`, '', "the same for one agent's sessions on one node"),
  '  mcp:',
  row(`session_idle_s: ${SERVE_LIMITS.session_idle_s}`, 'an MCP session unused this long ends on every node; a request with', 'its id is then a 404 and the client initialises a new session'),
  '  approvals:',
  row(`timeout_s: ${SERVE_APPROVALS.timeout_s}`, 'a tool call an approve rule holds waits this long for a person, then', 'it is refused (approving it later lets the same call pass once)'),
  row(`keep_alive_s: ${SERVE_APPROVALS.keep_alive_s}`, 'while a call waits: an SSE keep-alive (a ping on Messages), or a line', 'break before a JSON answer, this often'),
  row('notify_url: URL', 'each new approval is POSTed there as {approval, console_url}'),
  '  metrics:',
  row('require_key: true', '/metrics takes an admin key without a tenant (Authorization: Bearer)'),
  row('listen: HOST:PORT', 'serve /metrics on this address (a private one for the scraper), and', 'not on the main one'),
].join('\n');

const HELP_AFTER = `
Without --config (or AGENTGW_CONFIG) every setting has its default: listen on ${SERVE_DEFAULTS.host}:${SERVE_DEFAULTS.port}
(admin interface http://${SERVE_DEFAULTS.host}:${SERVE_DEFAULTS.port}/api, gateway http://${SERVE_DEFAULTS.host}:${SERVE_DEFAULTS.port}/v1),
SQLite at ${SERVE_DEFAULTS.sqlitePath}, in-memory counters, and the offline \`mock\` provider when no
provider is configured. examples/agentgw.yaml shows every key.

Limits (agentgw.yaml, defaults shown):
  limits:
${LIMIT_ROWS}

Environment:
  AGENTGW_ADMIN_KEY     the root admin key (role admin). Unset on the first start: the server
                        generates one and prints it once to stderr (only its hash is stored). Set:
                        it is the root key, and replaces a key generated or set earlier (the server
                        says so).
  AGENTGW_CONFIG        the config file when --config is not given
  AGENTGW_DATABASE_URL  postgres://... instead of SQLite (nodes that share it share the
                        configuration)
  AGENTGW_REDIS_URL     redis://... for the budget and rate-limit counters nodes share
  AGENTGW_SECRET_KEY    the secret every node shares: agent key hashes, MCP session ids, console
                        cookies, and the per-agent MCP credentials it seals. Unset: one is
                        generated and kept in the database (which then holds what opens them).

Output: stderr carries sentences (a generated key, "agentgw listening: admin URL/api, gateway
URL/v1, console URL/ui" once requests are accepted, errors); stdout carries the server's log, one
JSON object a line.
SIGTERM or SIGINT (ctrl-C) drains the requests in flight, writes their usage and exits 0, saying
"agentgw draining" when it starts and "agentgw stopped at TIME" when it is done; a second ctrl-C
stops at once. Tool calls held for approval are not waited for: their approvals become abandoned
and the calls are refused to their clients at once, naming the approval.
`;

/** Declares `serve`'s flags and help on the command bin.ts registers. */
export function declareServe(cmd: Command): Command {
  return cmd
    .description('run the gateway (admin interface at /api, gateway at /v1)')
    .option('--config <file>', 'agentgw.yaml (env AGENTGW_CONFIG; default: none, every setting at its default)')
    .option('--port <n>', `port to listen on (default ${SERVE_DEFAULTS.port}, or the port of listen: in the config; 0 = any free port)`)
    .option('--host <host>', `address to listen on (default ${SERVE_DEFAULTS.host}, or the host of listen: in the config)`)
    .addHelpText('after', HELP_AFTER);
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
  // Listening for the signals before saying so: whoever waits for the line may stop the server at once.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  // stderr: sentences for people (tests and the bench wait for this one); the server's JSON log is on stdout.
  if (server.metricsUrl) note(`agentgw metrics: ${server.metricsUrl}/metrics`);
  note(`agentgw listening: admin ${server.url}/api, gateway ${server.url}/v1${server.consoleUrl ? `, console ${server.consoleUrl}` : ''}`);
  await stopped;
  // The drain can take as long as the longest stream in flight: say it is happening, and when it is over.
  const drainStart = Date.now();
  note('agentgw draining: no new requests; finishing those in flight and writing their usage (ctrl-C again stops at once)');
  await server.close();
  note(`agentgw stopped at ${new Date().toISOString()} after draining for ${((Date.now() - drainStart) / 1000).toFixed(1)} s`);
  return 0;
}
