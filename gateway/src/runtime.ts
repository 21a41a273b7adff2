import type { GatewayConfig } from './config.js';
import type { Spend } from './contract/index.js';
import { type BudgetFields, effectiveDailyLimit, nextUtcDayStart, nextUtcMonthStart, utcDayKey, utcMonthKey } from './accounting/budget-window.js';
import { createCounters } from './accounting/counters/create-counters.js';
import { StoreNodeRegistry } from './accounting/counters/node-registry.js';
import { DEFAULT_REDIS_PREFIX } from './accounting/counters/redis-keys.js';
import { CountersUnavailableError, type Counters, type SeedRows, type UsageGate } from './accounting/counters/spec.js';
import { PriceTable } from './accounting/prices.js';
import { UsageWriter } from './accounting/usage-writer.js';
import { openUsageJournal, registerJournalMetrics } from './accounting/usage-journal.js';
import { DataPlane } from './data-plane/data-plane.js';
import { McpGateway } from './mcp/mcp-gateway.js';
import { ApprovalNotifier } from './approvals/approval-notifier.js';
import { Approvals } from './approvals/approvals.js';
import { isLoopbackHost } from './mcp/origin.js';
import { Router } from './data-plane/router.js';
import { RedisCooldowns } from './data-plane/route-health-redis.js';
import { registerRouteMetrics } from './data-plane/route-metrics.js';
import { storeUnavailable } from './policy/counters-unavailable.js';
import { createProvider } from './providers/index.js';
import type { ProviderAdapter } from './providers/spec.js';
import { Telemetry } from './telemetry/telemetry.js';
import { KeyHasher, generateKey, keyPrefix, newSecret } from './security/keys.js';
import type { Services } from './services.js';
import { openStore } from './storage/open-store.js';
import { startResponseRetention } from './storage/response-retention.js';
import { Snapshot } from './storage/snapshot.js';
import type { Store } from './storage/store.js';
import { VERSION } from './version.js';
import { RedisRunningSteps } from './data-plane/running-steps.js';

export interface Runtime extends Services {
  readonly dataPlane: DataPlane;
  readonly telemetry: Telemetry;
  /** The root admin key when this start generated it (printed once), else null. */
  readonly generatedAdminKey: string | null;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  env?: NodeJS.ProcessEnv;
  /** PostgreSQL schema to use (tests isolate themselves this way). */
  pgSchema?: string;
  /** Where to print a generated root key; stderr by default. */
  announceKey?: (key: string) => void;
  /** Redis key prefix for the counters (tests isolate themselves this way). */
  redisPrefix?: string;
  log?: { warn: (obj: object, msg: string) => void; error: (obj: object, msg: string) => void };
}

/** Opens storage and builds everything the routes share. */
export async function createRuntime(config: GatewayConfig, opts: RuntimeOptions = {}): Promise<Runtime> {
  const env = opts.env ?? process.env;
  // Every database call has limits.db_timeout_ms as its deadline: a request never waits longer for the database.
  const timeoutMs = config.limits.db_timeout_ms;
  const store: Store = await openStore(
    config.storage.kind === 'sqlite'
      ? { kind: 'sqlite', path: config.storage.path, timeoutMs }
      : { kind: 'postgres', url: config.storage.url, schema: opts.pgSchema, timeoutMs, log: opts.log },
  );
  const opened: Array<() => unknown> = [() => store.close()];
  try {
    // One key secret per deployment, shared by every node through the database unless set in the environment
    // (AGENTGW_SECRET_KEY, CONTRACT's name; AGENTGW_KEY_SECRET, its earlier one). It also signs console session cookies.
    const secret = env.AGENTGW_SECRET_KEY ?? env.AGENTGW_KEY_SECRET ?? (await store.initSetting('key_secret', newSecret()));
    const hasher = new KeyHasher(secret);
    const generatedAdminKey = await ensureRootKey(store, hasher, env, opts.announceKey);
    const snapshot = new Snapshot(store);
    await snapshot.start();
    opened.push(() => snapshot.stop());

    const { providers, pools } = buildProviders(config);
    opened.push(() => Promise.all([...providers.values(), ...[...pools.values()].flatMap((pool) => pool.slice(1))].map((p) => p.close())));
    const router = new Router(providers, config.models, undefined, pools);
    // Routes written through the admin interface: every node takes them with the snapshot (within 1 s of the write).
    snapshot.onRoutes((routes) => router.setStoredRoutes(routes));
    // Counters (issue 23): a Redis that lost its state rebuilds from the usage rows, this node's queued rows written first.
    let flushUsage: () => Promise<void> = async () => undefined;
    // Redis counters: the nodes sharing them (after Redis loses its state each puts back its holds before a budgeted
    // request passes), and the usage writer, whose rows they hold back while they are rebuilt.
    let usageGate: UsageGate | undefined;
    const redisPrefix = (config.counters.kind === 'redis' ? config.counters.prefix : undefined) ?? opts.redisPrefix;
    if (config.counters.kind === 'redis') {
      // Cooldowns of route targets are shared with the other nodes through the same Redis.
      const cooldowns = new RedisCooldowns(router.health, config.counters.url, redisPrefix ?? DEFAULT_REDIS_PREFIX);
      opened.push(() => cooldowns.close());
    }
    const nodes = config.counters.kind === 'redis' ? new StoreNodeRegistry(store, redisPrefix ?? DEFAULT_REDIS_PREFIX) : undefined;
    if (nodes) {
      await nodes.start();
      opened.push(() => nodes.stop());
    }
    const counters: Counters = await createCounters({
      redisUrl: config.counters.kind === 'redis' ? config.counters.url : undefined,
      prefix: redisPrefix,
      loadSeed: async () => {
        await Promise.race([flushUsage().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000).unref())]);
        return readSeedRows(store);
      },
      // Memory counters (issue 23, memory): a trace idle for traceIdleMs leaves memory; its next request reads its spend back.
      loadTraceSpend: async (traceId) => {
        await Promise.race([flushUsage().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000).unref())]);
        const colon = traceId.indexOf(':');
        return store.traceSpend(traceId.slice(0, colon), traceId.slice(colon + 1));
      },
      traceIdleMs: positiveSeconds(env.AGENTGW_TRACE_IDLE_SECONDS),
      nodes,
      usage: () => usageGate,
      commandTimeoutMs: config.limits.redis_timeout_ms,
      breakerFailures: config.limits.redis_breaker_failures,
      log: opts.log,
    });
    opened.push(() => counters.close());
    // Usage journal (issue 23): rows a stopped node left in it go to the database first, so the counters seeded next include them.
    const journal = await openUsageJournal(config, store, opts.log, counters.tracker);
    opened.push(() => journal.close());
    await seedCounters(store, counters, opts.log);
    const retention = startResponseRetention(store, { retentionDays: config.responses.retention_days, log: opts.log });
    opened.push(() => retention.stop());
    const telemetry = await Telemetry.create(VERSION, env, opts.log);
    let lastUsageError = 0;
    const usage = new UsageWriter(store, {
      journal,
      tracker: counters.tracker,
      onError: (err) => {
        // A store that is down fails every flush: one line per half minute says so.
        if (Date.now() - lastUsageError < 30_000) return;
        lastUsageError = Date.now();
        opts.log?.error({ err, queued: usage.pending }, 'writing usage records failed; will retry');
      },
      onDropped: (r, err) => opts.log?.error({ err, request_id: r.request_id, trace_id: r.trace_id }, 'a usage record the database refused was left out'),
    });
    registerJournalMetrics(telemetry.metrics.registry, journal, usage);
    registerRouteMetrics(telemetry.metrics.registry, router.health);
    const dataPlane = new DataPlane(snapshot, router, new PriceTable(config.prices), counters, hasher, usage, telemetry, store, config.anthropic_betas);
    const mcp = new McpGateway({
      servers: config.mcp_servers,
      dataPlane,
      bodyLimit: config.limits.body_bytes,
      sessionStore: store,
      sessionIdleMs: config.mcp.session_idle_s * 1000,
      allowedOrigins: config.mcp.allowed_origins,
      authorizationServers: config.mcp.authorization_servers,
      credentialStore: store,
      loopbackListen: isLoopbackHost(config.listen.replace(/:\d+$/, '')),
      sessionLimits: { total: config.limits.mcp_sessions, perAgent: config.limits.mcp_sessions_per_agent },
      log: opts.log,
      // Sessions served round-robin: a client's answer or a notification reaches the node that needs it through Redis.
      redis: config.counters.kind === 'redis' ? { url: config.counters.url, prefix: redisPrefix ?? DEFAULT_REDIS_PREFIX } : undefined,
    });
    opened.push(() => mcp.close());
    dataPlane.piiScanBytes = config.limits.pii_scan_bytes;
    if (config.counters.kind === 'redis') {
      // Steps in flight are listed by every node (GET /traces/{trace_id}), whichever runs them.
      const running = new RedisRunningSteps(config.counters.url, redisPrefix ?? DEFAULT_REDIS_PREFIX);
      dataPlane.running = running;
      opened.push(() => running.close());
    }
    // Calls held for approval: decisions reach the holding node through Redis (when counters are Redis) and its poll.
    const approvals = new Approvals(store, {
      timeoutS: config.approvals.timeout_s,
      keepAliveMs: Math.round(config.approvals.keep_alive_s * 1000),
      notifier: config.approvals.notify_url
        ? new ApprovalNotifier({ url: config.approvals.notify_url, consoleUrl: (id) => `http://${config.listen}/ui/approvals?id=${encodeURIComponent(id)}`, log: opts.log })
        : undefined,
      redis: config.counters.kind === 'redis' ? { url: config.counters.url, prefix: redisPrefix ?? DEFAULT_REDIS_PREFIX } : undefined,
      // Memory counters keep the trace of a held call in memory until its usage row is written.
      keepTrace: counters.keepTrace ? (traceKey) => counters.keepTrace!(traceKey) : undefined,
      log: opts.log,
    });
    opened.push(() => approvals.close());
    dataPlane.approvals = approvals;
    flushUsage = () => usage.flush(); // counters: see loadSeed above
    usageGate = usage;

    const runtime: Runtime = {
      version: VERSION,
      config,
      store,
      snapshot,
      hasher,
      dataPlane,
      approvals,
      mcp,
      telemetry,
      countersKind: counters.kind,
      generatedAdminKey,
      spend: (agentId, policy) => spendOf((now) => counters.spend(agentId, now), policy),
      tenantSpend: (tenant) => spendOf((now) => counters.tenantSpend(tenant.id, now), tenant),
      routeHealth: () => router.routeHealth(),
      router,
      running: { of: (traceId, tenantId) => dataPlane.running.of(traceId, tenantId), counts: (ids) => dataPlane.running.counts(ids) },
      flushUsage: () => usage.flush(),
      providerInfo: () =>
        [...providers.values()].map((p) => ({
          name: p.name,
          type: p.type,
          base_url: p.baseUrl,
          models: [...p.models],
          configured: p.configured,
        })),
      async close() {
        // Records first (they need the store), then everything else in reverse order of opening.
        await usage.close();
        await telemetry.close();
        for (const close of opened.reverse()) await close();
        opened.length = 0;
      },
    };
    return runtime;
  } catch (e) {
    for (const close of opened.reverse()) await close();
    throw e;
  }
}

/** The configured providers; with none configured, an offline `mock` provider so the gateway can be tried at once. */
function buildProviders(config: GatewayConfig): { providers: Map<string, ProviderAdapter>; pools: Map<string, ProviderAdapter[]> } {
  const entries = Object.entries(config.providers);
  if (entries.length === 0) entries.push(['mock', { type: 'mock' }]);
  const maxBodyBytes = Math.floor(config.limits.upstream_body_mb * 1024 * 1024);
  const providers = new Map<string, ProviderAdapter>();
  const pools = new Map<string, ProviderAdapter[]>();
  for (const [name, c] of entries) {
    const keys = 'api_keys' in c ? c.api_keys : undefined;
    if (!keys) {
      providers.set(name, createProvider(name, c, { maxBodyBytes }));
      continue;
    }
    if ('api_key' in c && c.api_key !== undefined) throw new Error(`providers.${name}: set api_key or api_keys, not both`);
    // A key pool: one adapter per key (each with its own connections), picked in turn by the router.
    const pool = keys.map((key) => createProvider(name, { ...c, api_keys: undefined, api_key: key }, { maxBodyBytes }));
    providers.set(name, pool[0]!);
    if (pool.length > 1) pools.set(name, pool);
  }
  return { providers, pools };
}

/** AGENTGW_TRACE_IDLE_SECONDS and the like: milliseconds, or undefined when unset or not a positive number. */
function positiveSeconds(v: string | undefined): number | undefined {
  const n = Number(v);
  return v && Number.isFinite(n) && n > 0 ? n * 1000 : undefined;
}

/** Today's and this month's spend per agent and per tenant, and this month's per trace, from the usage records. */
async function readSeedRows(store: Store): Promise<SeedRows> {
  const now = new Date();
  const day = `${utcDayKey(now)}T00:00:00.000Z`;
  const month = `${utcMonthKey(now)}-01T00:00:00.000Z`;
  const [d, m, traces, td, tm] = await Promise.all([
    store.spendSince(day),
    store.spendSince(month),
    store.traceSpendSince(month),
    store.tenantSpendSince(day),
    store.tenantSpendSince(month),
  ]);
  const dayOf = new Map(d.map((r) => [r.agent_id, r.cost]));
  const tenantDayOf = new Map(td.map((r) => [r.tenant_id, r.cost]));
  return {
    now,
    agents: m.map((r) => ({ agentId: r.agent_id, month: r.cost, day: dayOf.get(r.agent_id) ?? 0 })),
    traces: traces.map((t) => ({ traceId: `${t.tenant_id}:${t.trace_id}`, cost: t.cost })),
    tenants: tm.map((r) => ({ tenantId: r.tenant_id, month: r.cost, day: tenantDayOf.get(r.tenant_id) ?? 0 })),
  };
}

/**
 * In-memory counters start empty: restore today's and this month's spend from the usage records. A Redis that cannot be
 * reached now is not waited for: it is checked (and rebuilt if it lost its state) when it answers, before any budget.
 */
async function seedCounters(store: Store, counters: Counters, log: RuntimeOptions['log']): Promise<void> {
  const rows = await readSeedRows(store);
  try {
    await counters.seed(rows);
  } catch (err) {
    if (!(err instanceof CountersUnavailableError)) throw err;
    log?.warn({ err }, 'Redis counters unreachable at start: requests that need them are refused until it answers');
  }
}

/** An agent's spend with its policy's limits, or a tenant's with its own: the same shape (CONTRACT). */
async function spendOf(recorded: (now: Date) => Promise<{ day: number; month: number }>, budgets: BudgetFields | undefined): Promise<Spend> {
  const now = new Date();
  // Counters that cannot answer: 503 store_unavailable, not a made-up zero.
  const { day, month } = await recorded(now).catch((err: unknown) => {
    throw err instanceof CountersUnavailableError ? storeUnavailable(err) : err;
  });
  return {
    day,
    month,
    daily_limit: budgets ? effectiveDailyLimit(budgets, now) : null,
    monthly_limit: budgets?.monthly_budget ?? null,
    day_resets_at: nextUtcDayStart(now).toISOString(),
    month_resets_at: nextUtcMonthStart(now).toISOString(),
  };
}

async function ensureRootKey(
  store: Store,
  hasher: KeyHasher,
  env: NodeJS.ProcessEnv,
  announce: ((key: string) => void) | undefined,
): Promise<string | null> {
  // 'generated' or 'env': where the stored root key came from, so that a replaced key is named for what it was.
  const ORIGIN = 'root_key_origin';
  const fromEnv = env.AGENTGW_ADMIN_KEY;
  if (fromEnv) {
    const hash = hasher.hash(fromEnv);
    if ((await store.findAdminKeyByHash(hash))?.id === 'root') return null;
    const origin = await store.getSetting(ORIGIN);
    const replaces = origin !== undefined || (await store.hasAdminKeyWithRole('admin'));
    await store.upsertRootKey(hash, keyPrefix(fromEnv));
    await store.setSetting(ORIGIN, 'env');
    if (replaces) {
      const earlier = origin === 'generated' ? 'the root admin key generated on an earlier start' : origin === 'env' ? 'the root admin key an earlier AGENTGW_ADMIN_KEY set' : 'the root admin key stored earlier';
      process.stderr.write(`agentgw: AGENTGW_ADMIN_KEY replaces ${earlier}; that key no longer works.\n`);
    }
    return null;
  }
  if (await store.hasAdminKeyWithRole('admin')) return null;
  const key = generateKey('adk');
  await store.upsertRootKey(hasher.hash(key), keyPrefix(key));
  await store.setSetting(ORIGIN, 'generated');
  (announce ?? ((k) => process.stderr.write(`agentgw: generated the root admin key (shown once, only its hash is stored): ${k}\n`)))(key);
  return key;
}
