import { AgentgwError } from '../contract/index.js';
import type { ProviderAdapter } from '../providers/spec.js';
import { HealthBoard, type TargetHealth } from './route-health.js';

export type RouteStrategy = 'fallback' | 'weighted' | 'least_busy' | 'latency';

/** One target of `models.<alias>` as configured: `provider/model`, or the object form with its weight and quota. */
export type TargetConfig = string | { model: string; weight?: number; priority?: number; rpm?: number; tpm?: number };
/** `models.<alias>`: an ordered list of targets (fallback), or `{strategy, targets}`. */
export type AliasConfig = TargetConfig[] | { strategy?: RouteStrategy; targets: TargetConfig[] };

/** Share of requests a `latency` route sends to a target other than the fastest, so slower ones are measured again. */
export const LATENCY_EXPLORATION = 0.1;

/** `claude-*`: `*` any run of characters, `?` one; everything else literal. */
function globPattern(glob: string): RegExp {
  return new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
}

/** One place a model name can be served: `provider/model`, in fallback order. */
export interface Target {
  /** `provider/model` */
  id: string;
  provider: ProviderAdapter;
  /** The upstream's model id. */
  model: string;
  /** How the route this target belongs to picks among its targets. */
  strategy: RouteStrategy;
  /** Share of traffic under `weighted` (default 1). */
  weight: number;
  /** Lower groups first; a higher number is used only when every target of the groups before is unavailable (default 0). */
  priority: number;
  /** The deployment's own quota (per node). */
  rpm?: number;
  tpm?: number;
  /** This node's view of the deployment, shared by every alias routing to it. */
  health: TargetHealth;
  /** Smooth weighted round-robin state of this target within its route (an object, so copies of the target share it). */
  swrr: { current: number };
  /** A provider's key pool (`api_keys`): one adapter per key, each with its own health, used in turn. */
  keys?: readonly PoolKey[];
  keyTurn?: { next: number };
}

export interface PoolKey {
  index: number;
  provider: ProviderAdapter;
  health: TargetHealth;
}

/** A route written through the admin interface (stored, reloaded with the snapshot): the object form of a config alias. */
export interface StoredRouteConfig {
  alias: string;
  strategy: RouteStrategy;
  targets: ReadonlyArray<{ model: string; weight: number; priority: number; rpm: number | null; tpm: number | null }>;
}

/** Resolves `provider/model` ids, configured aliases and stored routes into ordered fallback targets. */
export class Router {
  private readonly aliases = new Map<string, Target[]>();
  /** Alias keys with `*` or `?` (`claude-*`), tried in configuration order when no exact alias or provider/model matches. */
  private readonly globs: Array<{ pattern: RegExp; targets: Target[] }> = [];
  /** Routes of the admin interface: after the config's aliases, which they can never shadow (those are read-only). */
  private stored = new Map<string, Target[]>();
  private storedGlobs: Array<{ pattern: RegExp; targets: Target[] }> = [];
  private readonly cache = new Map<string, Target[]>();

  constructor(
    private readonly providers: ReadonlyMap<string, ProviderAdapter>,
    aliases: Record<string, AliasConfig>,
    readonly health: HealthBoard = new HealthBoard(),
    private readonly pools: ReadonlyMap<string, readonly ProviderAdapter[]> = new Map(),
  ) {
    for (const [alias, cfg] of Object.entries(aliases)) {
      const strategy = Array.isArray(cfg) ? 'fallback' : (cfg.strategy ?? 'fallback');
      const list = Array.isArray(cfg) ? cfg : cfg.targets;
      this.aliases.set(
        alias,
        list.map((tc) => {
          const id = typeof tc === 'string' ? tc : tc.model;
          const t = this.direct(id, strategy);
          if (!t) throw new Error(`models.${alias}: target ${id} names no configured provider (providers: ${[...providers.keys()].join(', ')})`);
          if (typeof tc !== 'string') {
            t.weight = tc.weight ?? 1;
            t.priority = tc.priority ?? 0;
            t.rpm = tc.rpm;
            t.tpm = tc.tpm;
          }
          return t;
        }),
      );
      if (/[*?]/.test(alias)) this.globs.push({ pattern: globPattern(alias), targets: this.aliases.get(alias)! });
    }
  }

  /** Whether agentgw.yaml defines this alias (such a route is read-only on the admin interface). */
  isConfigAlias(alias: string): boolean {
    return this.aliases.has(alias);
  }

  /** Every alias of agentgw.yaml with its targets, in the file's order. */
  configRoutes(): StoredRouteConfig[] {
    return [...this.aliases].map(([alias, targets]) => ({
      alias,
      strategy: targets[0]?.strategy ?? 'fallback',
      targets: targets.map((t) => ({ model: t.id, weight: t.weight, priority: t.priority, rpm: t.rpm ?? null, tpm: t.tpm ?? null })),
    }));
  }

  /**
   * Replaces the stored routes (each snapshot load). A target whose provider is no longer configured is left out; a route
   * left with none answers unknown_model, naming why.
   */
  setStoredRoutes(routes: readonly StoredRouteConfig[]): void {
    const stored = new Map<string, Target[]>();
    const globs: Array<{ pattern: RegExp; targets: Target[] }> = [];
    for (const r of routes) {
      if (this.aliases.has(r.alias)) continue;
      const targets: Target[] = [];
      for (const tc of r.targets) {
        const t = this.direct(tc.model, r.strategy);
        if (!t) continue;
        t.weight = tc.weight;
        t.priority = tc.priority;
        t.rpm = tc.rpm ?? undefined;
        t.tpm = tc.tpm ?? undefined;
        targets.push(t);
      }
      stored.set(r.alias, targets);
      if (/[*?]/.test(r.alias)) globs.push({ pattern: globPattern(r.alias), targets });
    }
    this.stored = stored;
    this.storedGlobs = globs;
    this.cache.clear();
  }

  private direct(id: string, strategy: RouteStrategy = 'fallback'): Target | undefined {
    const slash = id.indexOf('/');
    if (slash <= 0 || slash === id.length - 1) return undefined;
    const provider = this.providers.get(id.slice(0, slash));
    if (!provider) return undefined;
    const t: Target = { id, provider, model: id.slice(slash + 1), strategy, weight: 1, priority: 0, health: this.health.of(id), swrr: { current: 0 } };
    const pool = this.pools.get(provider.name);
    if (pool) {
      t.keys = pool.map((p, index) => ({ index, provider: p, health: this.health.of(`${id}#${index}`) }));
      t.keyTurn = { next: 0 };
    }
    return t;
  }

  resolve(model: string): Target[] {
    const hit = this.cache.get(model) ?? this.aliases.get(model) ?? this.stored.get(model);
    if (hit) return hit.length > 0 ? hit : this.noTargets(model);
    const t = this.direct(model);
    const glob = t ? undefined : (this.globs.find((g) => g.pattern.test(model)) ?? this.storedGlobs.find((g) => g.pattern.test(model)));
    if (glob) {
      if (glob.targets.length === 0) return this.noTargets(model);
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(model, glob.targets);
      return glob.targets;
    }
    if (!t) {
      const names = [...this.providers.keys()].join(', ');
      const aliases = [...this.aliases.keys(), ...this.stored.keys()];
      throw new AgentgwError(
        'unknown_model',
        `Model ${model} is not known: use "provider/model" with a configured provider (${names})${aliases.length ? ` or an alias (${aliases.join(', ')})` : ''}.`,
        { param: 'model' },
      );
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(model, [t]);
    return [t];
  }

  /** A stored route whose every target names a provider the server config no longer has. */
  private noTargets(model: string): never {
    throw new AgentgwError(
      'unknown_model',
      `Model ${model} routes only to providers this server does not configure (${[...this.providers.keys()].join(', ')}): PUT /api/routes/${encodeURIComponent(model)} with targets of a configured provider.`,
      { param: 'model' },
    );
  }

  /** GET /api/route-health: this node's view of every alias's targets, and of the other deployments it has called. */
  routeHealth(now = Date.now()): RouteHealthReport {
    const routes: RouteHealthReport['routes'] = [];
    const listed = new Set<string>();
    for (const [alias, targets] of [...this.aliases, ...this.stored]) {
      routes.push({ alias, strategy: targets[0]?.strategy ?? 'fallback', targets: targets.map((t) => targetHealthOf(t, now)) });
      for (const t of targets) listed.add(t.id);
    }
    const others = [...this.health.all()].filter((h) => !listed.has(h.id) && !h.id.includes('#'));
    if (others.length > 0) {
      routes.push({ alias: null, strategy: 'fallback', targets: others.map((h) => targetHealthOf({ id: h.id, health: h, weight: 1, priority: 0 }, now)) });
    }
    return { routes };
  }

  /**
   * Every advertised model id and alias, for GET /v1/models: aliases (globs as patterns) with the targets they resolve
   * to, then each provider's models.
   */
  listModels(): ListedModel[] {
    const out: ListedModel[] = [];
    for (const [alias, targets] of [...this.aliases, ...this.stored]) {
      if (targets.length === 0) continue;
      out.push({ id: alias, owned_by: targets[0]!.provider.name, targets: targets.map((t) => t.id), ...(/[*?]/.test(alias) ? { pattern: true } : {}) });
    }
    for (const [name, p] of this.providers) for (const m of p.models) out.push({ id: `${name}/${m}`, owned_by: name });
    return out;
  }
}

/** An entry of GET /v1/models: a model, or an alias with its targets (`pattern` when the alias is a glob clients match). */
export interface ListedModel {
  id: string;
  owned_by: string;
  targets?: string[];
  pattern?: true;
}

/**
 * The order in which a request tries its targets: priority groups lowest first; within a group, by the route's strategy.
 * Targets cooling down (or probed by another request) and over their own rpm / tpm are left out; when that leaves none,
 * the answer is 429 upstream_rate_limited with Retry-After at the earliest moment one is back, and no upstream is called.
 */
export function attemptOrder<T extends Target>(targets: readonly T[], now: number, tokens: number, random: () => number = Math.random): T[] {
  const open: T[] = [];
  let earliest = Infinity;
  let grouped = false;
  for (const t of targets) {
    const h = t.health;
    if (!h.available(now)) {
      earliest = Math.min(earliest, h.probing ? now + 1000 : h.cooldownUntil);
    } else if (t.keys !== undefined && !t.keys.some((k) => k.health.available(now))) {
      for (const k of t.keys) earliest = Math.min(earliest, k.health.probing ? now + 1000 : k.health.cooldownUntil);
    } else if (!h.withinQuota(t.rpm, t.tpm, tokens, now)) {
      earliest = Math.min(earliest, h.quotaResetAt());
    } else {
      if (open.length > 0 && t.priority !== open[0]!.priority) grouped = true;
      open.push(t);
    }
  }
  if (open.length === 0) throw allCoolingDown(targets, earliest, now);
  if (open.length === 1) return open;
  if (grouped) open.sort((a, b) => a.priority - b.priority);
  const strategy = open[0]!.strategy;
  if (strategy === 'fallback') return open;
  const out: T[] = [];
  for (let i = 0; i < open.length; ) {
    let j = i + 1;
    while (j < open.length && open[j]!.priority === open[i]!.priority) j++;
    orderGroup(open.slice(i, j), strategy, out, random);
    i = j;
  }
  return out;
}

function orderGroup<T extends Target>(group: T[], strategy: RouteStrategy, out: T[], random: () => number): void {
  if (group.length === 1 || strategy === 'fallback') {
    out.push(...group);
    return;
  }
  if (strategy === 'weighted') {
    // Smooth weighted round-robin (nginx): every candidate gains its weight, the highest goes first and pays the total.
    let total = 0;
    let best = group[0]!;
    for (const t of group) {
      t.swrr.current += t.weight;
      total += t.weight;
      if (t.swrr.current > best.swrr.current) best = t;
    }
    best.swrr.current -= total;
    out.push(best);
    for (const t of group) if (t !== best) out.push(t);
    return;
  }
  if (strategy === 'least_busy') {
    out.push(...group.sort((a, b) => a.health.inFlight - b.health.inFlight));
    return;
  }
  // latency: unmeasured targets first, then the fastest; now and then another goes first so its latency stays known.
  const sorted = group.sort((a, b) => latencyKey(a) - latencyKey(b));
  if (random() < LATENCY_EXPLORATION) {
    const k = 1 + Math.floor(random() * (sorted.length - 1));
    const [explored] = sorted.splice(k, 1);
    sorted.unshift(explored!);
  }
  out.push(...sorted);
}

function latencyKey(t: Target): number {
  const l = t.health.latencyMs;
  return Number.isNaN(l) ? -1 : l;
}

function allCoolingDown(targets: readonly Target[], earliest: number, now: number): AgentgwError {
  const seconds = Math.max(1, Math.ceil((earliest - now) / 1000));
  const names = targets.map((t) => t.id).join(', ');
  return new AgentgwError(
    'upstream_rate_limited',
    `Every target of this model is cooling down after failures or over its own rate limit (${names}); retry in ${seconds} s.`,
    { headers: { 'retry-after': String(seconds) } },
  );
}

export interface TargetHealthReport {
  model: string;
  weight: number;
  priority: number;
  rpm: number | null;
  tpm: number | null;
  state: 'healthy' | 'cooling_down' | 'probing';
  cooldown_until: string | null;
  in_flight: number;
  /** Recent time to the upstream's answer (its headers, for a stream), an average weighted to the latest calls. */
  latency_ms_p50: number | null;
  error_rate: number;
  keys: Array<{ key_index: number; state: 'healthy' | 'cooling_down' | 'probing'; cooldown_until: string | null }>;
}

export interface RouteHealthReport {
  /** `alias: null` holds the deployments called by `provider/model` that no alias routes to. */
  routes: Array<{ alias: string | null; strategy: RouteStrategy; targets: TargetHealthReport[] }>;
}

function targetHealthOf(t: Pick<Target, 'id' | 'health' | 'weight' | 'priority' | 'rpm' | 'tpm' | 'keys'>, now: number): TargetHealthReport {
  const h = t.health;
  return {
    model: t.id,
    weight: t.weight,
    priority: t.priority,
    rpm: t.rpm ?? null,
    tpm: t.tpm ?? null,
    state: h.state(now),
    cooldown_until: h.cooldownUntil > now ? new Date(h.cooldownUntil).toISOString() : null,
    in_flight: Math.max(0, h.inFlight),
    latency_ms_p50: Number.isNaN(h.latencyMs) ? null : Math.round(h.latencyMs),
    error_rate: Math.round(h.errorRate * 1000) / 1000,
    keys: (t.keys ?? []).map((k) => ({
      key_index: k.index,
      state: k.health.state(now),
      cooldown_until: k.health.cooldownUntil > now ? new Date(k.health.cooldownUntil).toISOString() : null,
    })),
  };
}
