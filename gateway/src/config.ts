import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isMap, isNode, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { z } from 'zod';
import { PriceOverrides } from './accounting/prices.js';
import { DEFAULT_REDIS_BREAKER_FAILURES, DEFAULT_REDIS_TIMEOUT_MS } from './accounting/counters/spec.js';
import { ProviderConfig } from './providers/config.js';
import { McpServersConfig } from './mcp/mcp-config.js';
import { McpAuthorizationServers } from './mcp/oauth-config.js';
import { DEFAULT_PII_SCAN_BYTES } from './policy/pii/scan-budget.js';
import { AnthropicBetasConfig, DEFAULT_ANTHROPIC_BETAS } from './data-plane/anthropic-betas.js';
import { Role } from './contract/admin-keys.js';

const MB = 1024 * 1024;

const ListenAddress = z.string().regex(/^[^\s:]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/, { message: 'must be HOST:PORT' });

const TargetId = z.string().regex(/^[^/\s]+\/\S+$/, { message: 'must be "provider/model"' });
const TargetConfig = z.union([
  TargetId,
  z.strictObject({
    model: TargetId,
    weight: z.number().positive().max(1_000_000).optional(),
    priority: z.int().min(0).max(1000).optional(),
    rpm: z.int().positive().optional(),
    tpm: z.int().positive().optional(),
  }),
]);
/** `models.<alias>`: the targets in fallback order, or `{strategy, targets}` (see data-plane/router.ts). */
const AliasConfig = z.union([
  z.array(TargetConfig).min(1),
  z.strictObject({ strategy: z.enum(['fallback', 'weighted', 'least_busy', 'latency']).default('fallback'), targets: z.array(TargetConfig).min(1) }),
]);

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
  models: z.record(z.string().min(1).max(200), AliasConfig).default({}),
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
  console: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** Console sign-in through an OpenID Connect issuer (authorization code + PKCE); admin keys keep working beside it. */
      oidc: z
        .strictObject({
          issuer: z.url({ message: 'must be the issuer URL (its /.well-known/openid-configuration is read at sign-in)' }),
          client_id: z.string().min(1),
          /** Absent: a public client (PKCE only). */
          client_secret: z.string().min(1).optional(),
          /** The id token claim holding the role (a string or a list, e.g. groups). */
          role_claim: z.string().min(1).default('agentgw_role'),
          /** The id token claim holding the user's tenant; absent or empty: no tenant (only an admin or a viewer may have none). */
          tenant_claim: z.string().min(1).optional(),
          /** Claim value -> role; without it the claim must hold a role name itself. */
          role_map: z.record(z.string().min(1), Role).optional(),
          scopes: z.array(z.string().min(1)).min(1).default(['openid', 'profile', 'email']),
          /** Where the issuer sends the browser back; by default <the request's origin>/api/auth/oidc/callback. */
          redirect_uri: z.url().optional(),
          /** How long a console session lasts. */
          session_hours: z.number().positive().max(720).default(8),
        })
        .optional(),
    })
    .default({ enabled: true }),
  /** GET /metrics: on the main address with an admin key by default; `listen` serves it on its own address instead. */
  metrics: z
    .strictObject({
      listen: ListenAddress.optional(),
      /** An admin key without a tenant must be sent (Authorization: Bearer); false serves /metrics to anyone who reaches it. */
      require_key: z.boolean().default(true),
    })
    .prefault({}),
  /**
   * Tool calls an `approve` rule holds: how long one waits for a person before it is refused (timeout_s), where each new
   * approval is POSTed (notify_url), and how often a waiting client gets a keep-alive (keep_alive_s).
   */
  approvals: z
    .strictObject({
      timeout_s: z.int({ message: 'must be a whole number of seconds' }).min(1, { message: 'must be at least 1 second' }).max(86_400, { message: 'must be at most 86400 (a day)' }).default(300),
      notify_url: z
        .url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL that accepts a JSON POST of each new approval' })
        .optional(),
      keep_alive_s: z.number().min(0.05, { message: 'must be at least 0.05' }).max(60, { message: 'must be at most 60' }).default(5),
    })
    .prefault({}),
  /** /mcp: a session unused for session_idle_s ends (a request with its id is a 404, and the client initialises again). */
  mcp: z
    .strictObject({
      session_idle_s: z.int().min(1).max(30 * 86_400).default(3600),
      /**
       * Origins (scheme://host[:port]) whose pages may call /mcp besides the gateway's own; "*" allows any. Requests without
       * an Origin (agents, CLIs) are always allowed.
       */
      allowed_origins: z
        .array(z.union([z.literal('*'), z.url({ protocol: /^https?$/, message: 'must be an origin such as https://app.example.com, or "*"' })]))
        .default([]),
      /** OAuth 2.1: authorization servers whose JWT access tokens /mcp accepts beside agent keys (empty: agent keys only). */
      authorization_servers: McpAuthorizationServers,
    })
    .prefault({}),
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

export class ConfigError extends Error {}

interface Unset {
  name: string;
  path: string;
}

/**
 * Replaces `${ENV_VAR}` in every string of the file with the variable's value; the variables that are not set are
 * collected into `unset`, so one start names them all.
 */
function interpolate(value: unknown, env: NodeJS.ProcessEnv, path: string, unset: Unset[]): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
      const v = env[name];
      if (v === undefined) {
        unset.push({ name, path });
        return '';
      }
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, `${path}[${i}]`, unset));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, path ? `${path}.${k}` : k, unset)]));
  }
  return value;
}

/** Where a path of the parsed file was written: `file:line:col` of the deepest node along it, or the file alone. */
class ConfigLocator {
  constructor(
    private readonly file: string,
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  /** With `key`, the last segment's key (an unknown key) instead of its value. */
  at(path: readonly PropertyKey[], key = false): string {
    let node: unknown = this.doc.contents;
    // Nothing along the path written in the file (a value from the environment): the file alone.
    let found: Node | null = null;
    for (const [i, seg] of path.entries()) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        const target = pair.value == null || (key && i === path.length - 1) ? pair.key : pair.value;
        if (isNode(target)) found = target;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        const item = node.items[seg];
        if (!isNode(item)) break;
        found = item;
        node = item;
      } else break;
    }
    const offset = found?.range?.[0];
    if (offset === undefined) return this.file;
    const { line, col } = this.lines.linePos(offset);
    return `${this.file}:${line}:${col}`;
  }
}

/** `providers.openai.api_key` as path segments (numbers for `[i]`). */
function segments(path: string): PropertyKey[] {
  return path.split(/\.|(?=\[)/).filter(Boolean).map((s) => (/^\[\d+\]$/.test(s) ? Number(s.slice(1, -1)) : s));
}

/** What to drop when a variable is not wanted: the provider or MCP server that reads it, else the setting. */
function removable(path: string): string {
  const [top, name] = path.split('.');
  if (top === 'providers' && name) return `the provider ${name}`;
  if (top === 'mcp_servers' && name) return `the MCP server ${name}`;
  return `the setting ${path}`;
}

function unsetError(unset: Unset[], locator: ConfigLocator | null): ConfigError {
  const lines = unset.map((u) => {
    const where = locator ? `${locator.at(segments(u.path))}: ` : '';
    return `${where}${u.path}: environment variable ${u.name} is not set: export it, or remove ${removable(u.path)}`;
  });
  const head = unset.length === 1 ? 'config: 1 environment variable is not set' : `config: ${unset.length} environment variables are not set`;
  return new ConfigError(`${head}\n  ${lines.join('\n  ')}`);
}

/** Reads the config file (optional) and the environment into one validated config. */
export function loadConfig(opts: { path?: string; env?: NodeJS.ProcessEnv; overrides?: Record<string, unknown> } = {}): GatewayConfig {
  const env = opts.env ?? process.env;
  const path = opts.path ?? env.AGENTGW_CONFIG;
  let raw: Record<string, unknown> = {};
  let locator: ConfigLocator | null = null;
  if (path) {
    let text: string;
    try {
      text = readFileSync(resolve(path), 'utf8');
    } catch (e) {
      throw new ConfigError(`cannot read config file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines });
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      const at = e.linePos?.[0];
      throw new ConfigError(`config ${path}${at ? `:${at.line}:${at.col}` : ''}: ${e.message.split('\n')[0]}`);
    }
    raw = (doc.toJS() as Record<string, unknown>) ?? {};
    locator = new ConfigLocator(path, doc, lines);
  }
  const unset: Unset[] = [];
  raw = interpolate(raw, env, '', unset) as Record<string, unknown>;
  if (unset.length > 0) throw unsetError(unset, locator);
  if (env.AGENTGW_DATABASE_URL) raw.storage = { kind: 'postgres', url: env.AGENTGW_DATABASE_URL };
  if (env.AGENTGW_REDIS_URL) raw.counters = { kind: 'redis', url: env.AGENTGW_REDIS_URL, ...(env.AGENTGW_REDIS_PREFIX ? { prefix: env.AGENTGW_REDIS_PREFIX } : {}) };
  Object.assign(raw, opts.overrides ?? {});
  const parsed = GatewayConfig.safeParse(raw);
  if (!parsed.success) {
    let issue = parsed.error.issues[0]!;
    // A union (an MCP server is HTTP or stdio) is explained by the branch that came closest, not by "Invalid input".
    while (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const closest = issue.errors.reduce((a, b) => (b.length < a.length ? b : a));
      if (closest.length === 0) break;
      issue = { ...closest[0]!, path: [...issue.path, ...closest[0]!.path] } as typeof issue;
    }
    const field = issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('') || '(root)';
    // file:line:col when the field was written in the file (not when it came from the environment or an override).
    const fromFile = locator && !(opts.overrides && issue.path[0] !== undefined && issue.path[0] in opts.overrides);
    // An unknown key is pointed at itself, not at the object that holds it.
    const unknownKey = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
    const where = fromFile && locator ? (unknownKey !== undefined ? locator.at([...issue.path, unknownKey], true) : locator.at(issue.path)) : null;
    throw new ConfigError(`config ${where && where !== path ? `${where}: ` : ''}${field}: ${issue.message}`);
  }
  return parsed.data;
}
