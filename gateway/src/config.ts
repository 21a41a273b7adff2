import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { PriceOverrides } from './accounting/prices.js';
import { DEFAULT_REDIS_BREAKER_FAILURES, DEFAULT_REDIS_TIMEOUT_MS } from './accounting/counters/spec.js';
import { ProviderConfig } from './providers/config.js';
import { McpServersConfig } from './mcp/mcp-config.js';
import { DEFAULT_PII_SCAN_BYTES } from './policy/pii/scan-budget.js';
import { AnthropicBetasConfig, DEFAULT_ANTHROPIC_BETAS } from './data-plane/anthropic-betas.js';

const MB = 1024 * 1024;

const ListenAddress = z.string().regex(/^[^\s:]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/, { message: 'must be HOST:PORT' });

/** `agentgw.yaml`: every key has a default, so no file is needed to start. */
export const GatewayConfig = z.strictObject({
  listen: ListenAddress.default('127.0.0.1:8080'),
  storage: z
    .union([
      z.strictObject({ kind: z.literal('sqlite'), path: z.string().default('./data/agentgw.db') }),
      z.strictObject({ kind: z.literal('postgres'), url: z.string() }),
    ])
    .default({ kind: 'sqlite', path: './data/agentgw.db' }),
  counters: z
    .union([z.strictObject({ kind: z.literal('memory') }), z.strictObject({ kind: z.literal('redis'), url: z.string(), prefix: z.string().max(100).optional() })])
    .default({ kind: 'memory' }),
  providers: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, { message: 'provider names are lowercase letters, digits, _ or -' }), ProviderConfig).default({}),
  models: z.record(z.string().min(1).max(200), z.array(z.string().min(3)).min(1)).default({}),
  prices: PriceOverrides.default({}),
  /** Request, upstream and connection limits (their defaults are listed in `agentgw serve --help`). */
  limits: z
    .strictObject({
      admin_body_bytes: z.number().int().min(1024).default(1024 * 1024),
      /** The /v1 and /mcp request body limit in MB (default 10); read as `body_bytes`. */
      body_mb: z.number().positive().max(1024).optional(),
      /** The same limit in bytes, as earlier releases named it: still read, body_mb is the name to use. */
      gateway_body_bytes: z.number().int().min(1024).optional(),
      /** A successful upstream body, or one event of its stream, larger than this is a 502 upstream_bad_response. */
      upstream_body_mb: z.number().positive().max(4096).default(32),
      /** Time a client has to send a request's headers (Node's headersTimeout). */
      headers_timeout_s: z.int().min(1).max(3600).default(60),
      /** Time a client has to send a whole request, headers and body; the answer, a stream say, is not counted (Node's requestTimeout). */
      request_timeout_s: z.int().min(1).max(86_400).default(300),
      /** How long an idle keep-alive connection is kept: longer than a load balancer's idle timeout (60 s on many). */
      keep_alive_timeout_s: z.int().min(1).max(3600).default(72),
      /** Client connections one node accepts at once; more are closed at once (clients retry). */
      max_connections: z.int().min(1).max(1_000_000).default(4096),
      /** The deadline of every database call (waiting for a connection, then its statements); past it, 503 store_unavailable. */
      db_timeout_ms: z.int().min(100).max(600_000).default(5000),
      /** The longest wait for one Redis counters command; past it the request that needs it is 503 store_unavailable. */
      redis_timeout_ms: z.int().min(10).max(60_000).default(DEFAULT_REDIS_TIMEOUT_MS),
      /** Redis failures in a row (timeouts, a lost connection) after which requests that need counters are refused at once for a second. */
      redis_breaker_failures: z.int().min(1).max(1000).default(DEFAULT_REDIS_BREAKER_FAILURES),
      /** MCP sessions one node holds; past it the longest unused ends (its id is then a 404 and the client starts anew). */
      mcp_sessions: z.int().min(1).max(10_000_000).default(10_000),
      /** The same for one agent's sessions on one node. */
      mcp_sessions_per_agent: z.int().min(1).max(10_000_000).default(1000),
      /** The UTF-8 bytes of text a request's PII rules may read; past it, 413 body_too_large (only when a policy scans). */
      pii_scan_bytes: z.int().min(1024).default(DEFAULT_PII_SCAN_BYTES),
    })
    .superRefine((l, ctx) => {
      if (l.body_mb !== undefined && l.gateway_body_bytes !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['gateway_body_bytes'], message: 'set body_mb or gateway_body_bytes (its earlier name in bytes), not both' });
      }
      if (l.body_mb !== undefined && l.body_mb * MB < 1024) ctx.addIssue({ code: 'custom', path: ['body_mb'], message: 'must be at least 0.001 (1 KB)' });
      if (l.headers_timeout_s > l.request_timeout_s) {
        ctx.addIssue({ code: 'custom', path: ['headers_timeout_s'], message: `must not be more than request_timeout_s (${l.request_timeout_s}): the request timeout includes the headers` });
      }
    })
    .transform(({ body_mb, gateway_body_bytes, ...rest }) => ({ ...rest, body_bytes: gateway_body_bytes ?? Math.floor((body_mb ?? 10) * MB) }))
    .prefault({}),
  log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** The usage journal (see accounting/usage-journal.ts): path is a directory, by default the SQLite file's, else ./data/. */
  journal: z
    .strictObject({
      path: z.string().min(1).optional(),
      fsync_ms: z.number().int().min(0).max(60_000).default(50),
      max_mb: z.number().positive().default(1024),
    })
    .default({ fsync_ms: 50, max_mb: 1024 }),
  /** Stored Responses API turns (store: true) are deleted this many days after they were made. */
  responses: z
    .strictObject({ retention_days: z.number().int().min(1).default(30) })
    .default({ retention_days: 30 }),
  /** The `anthropic-beta` values passed on to Anthropic upstreams; any other is a 400 invalid_header. Replaces the default list. */
  anthropic_betas: AnthropicBetasConfig.default([...DEFAULT_ANTHROPIC_BETAS]),
  /** Upstream MCP servers federated at /mcp: name -> {url, headers?} or {command, args?, env?}, with timeout_ms and prices. */
  mcp_servers: McpServersConfig.default({}),
  /** The web console at /ui (console/dist, built by `npm run build`); false leaves /ui unanswered (404). */
  console: z.strictObject({ enabled: z.boolean().default(true) }).default({ enabled: true }),
  /** GET /metrics: on the main address with an admin key by default; `listen` serves it on its own address instead. */
  metrics: z
    .strictObject({
      listen: ListenAddress.optional(),
      /** An admin key without a tenant must be sent (Authorization: Bearer); false serves /metrics to anyone who reaches it. */
      require_key: z.boolean().default(true),
    })
    .prefault({}),
  /** /mcp: a session unused for session_idle_s ends (a request with its id is a 404, and the client initialises again). */
  mcp: z.strictObject({ session_idle_s: z.int().min(1).max(30 * 86_400).default(3600) }).prefault({}),
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

export class ConfigError extends Error {}

/** Replaces `${ENV_VAR}` in every string of the file with the variable's value; a missing variable is an error. */
function interpolate(value: unknown, env: NodeJS.ProcessEnv, path: string): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
      const v = env[name];
      if (v === undefined) throw new ConfigError(`config ${path}: environment variable ${name} is not set`);
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, path ? `${path}.${k}` : k)]));
  }
  return value;
}

/** Reads the config file (optional) and the environment into one validated config. */
export function loadConfig(opts: { path?: string; env?: NodeJS.ProcessEnv; overrides?: Record<string, unknown> } = {}): GatewayConfig {
  const env = opts.env ?? process.env;
  const path = opts.path ?? env.AGENTGW_CONFIG;
  let raw: Record<string, unknown> = {};
  if (path) {
    let text: string;
    try {
      text = readFileSync(resolve(path), 'utf8');
    } catch (e) {
      throw new ConfigError(`cannot read config file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    const doc = parseDocument(text);
    if (doc.errors.length > 0) throw new ConfigError(`config file ${path}: ${doc.errors[0]!.message}`);
    raw = (doc.toJS() as Record<string, unknown>) ?? {};
  }
  raw = interpolate(raw, env, '') as Record<string, unknown>;
  if (env.AGENTGW_DATABASE_URL) raw.storage = { kind: 'postgres', url: env.AGENTGW_DATABASE_URL };
  if (env.AGENTGW_REDIS_URL) raw.counters = { kind: 'redis', url: env.AGENTGW_REDIS_URL, ...(env.AGENTGW_REDIS_PREFIX ? { prefix: env.AGENTGW_REDIS_PREFIX } : {}) };
  Object.assign(raw, opts.overrides ?? {});
  const parsed = GatewayConfig.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`config ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}
