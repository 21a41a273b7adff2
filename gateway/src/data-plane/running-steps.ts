// Steps in flight (CONTRACT: a step is listed with status "running" from admission on). One node: kept in memory. Several
// nodes (Redis counters): one Redis hash per trace id (field: request id), whose entries the node running a step refreshes
// while it runs, so a node that dies leaves its steps behind for at most RUNNING_TTL_MS.
// A step's record reaches the database in the usage writer's next batch, up to a second or so after it ended: until then
// the step is kept here as it ended (its final status), so a trace never loses a step between the two.
import type { Redis } from 'ioredis';
import { bestEffortRedis } from '../storage/redis-client.js';
import type { PiiType, TraceToolCall } from '../contract/index.js';
import type { UsageRecord } from '../storage/store.js';
import type { RequestContext } from './request-context.js';

/** How long a step a node stopped refreshing stays listed (a node that died mid-step). */
export const RUNNING_TTL_MS = 30_000;
const REFRESH_MS = RUNNING_TTL_MS / 3;
/** How long an ended step is kept for readers while its record is on its way to the database (batched every 250 ms). */
export const ENDED_TTL_MS = 5_000;

/** How a step ended, as its record has it (shown until the database has the record). */
export interface EndedStep {
  status: 'ok' | 'error' | 'blocked';
  http_status: number;
  error_code: string | null;
  model: string | null;
  provider: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  cost: number;
  latency_ms: number;
  ttft_ms: number | null;
  pii_types: PiiType[];
  response_id: string | null;
  tool_calls: TraceToolCall[];
  cleaned: string[];
}

/** A step admitted and not yet in the database, as GET /traces/{trace_id} lists it; `ended` once it was recorded. */
export interface RunningStep {
  request_id: string;
  tenant_id: string;
  agent_id: string;
  trace_id: string;
  endpoint: string;
  tool: string | null;
  model: string | null;
  requested_model: string | null;
  provider: string | null;
  stream: boolean;
  started_at: string;
  ended?: EndedStep;
}

export interface RunningSteps {
  /** The request passed admission: listed as running until `end`. Never awaited on the request's path. */
  begin(ctx: RequestContext, tool?: string): void;
  /** The request's step was recorded (any outcome): listed as it ended until the database has it. */
  end(record: UsageRecord): void;
  /** Steps of the trace on any node, running or ended lately, oldest first; of one tenant when given. */
  of(traceId: string, tenantId?: string): Promise<RunningStep[]>;
  /** How many steps run now per (tenant, trace) among the given trace ids, keyed `tenant\0trace`. */
  counts(traceIds: string[]): Promise<Map<string, number>>;
  close(): Promise<void>;
}

function stepOf(ctx: RequestContext, tool: string | undefined): RunningStep {
  return {
    request_id: ctx.requestId,
    tenant_id: ctx.agent.tenant_id,
    agent_id: ctx.agent.id,
    trace_id: ctx.traceId,
    endpoint: ctx.endpoint,
    tool: tool ?? null,
    model: ctx.model,
    requested_model: ctx.requestedModel ?? null,
    provider: ctx.provider,
    stream: ctx.stream,
    started_at: ctx.startedAtIso,
  };
}

function endedOf(r: UsageRecord): EndedStep {
  return {
    status: r.status as EndedStep['status'],
    http_status: r.http_status,
    error_code: r.error_code,
    model: r.model,
    provider: r.provider,
    prompt_tokens: r.prompt_tokens,
    completion_tokens: r.completion_tokens,
    cached_tokens: r.cached_tokens,
    reasoning_tokens: r.reasoning_tokens,
    cost: r.cost,
    latency_ms: r.latency_ms,
    ttft_ms: r.ttft_ms,
    pii_types: r.pii_types as PiiType[],
    response_id: r.response_id,
    tool_calls: r.tool_calls ?? [],
    cleaned: r.cleaned ?? [],
  };
}

const ignore = () => undefined;

const byStart = (a: RunningStep, b: RunningStep) => (a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : 0);

function countOf(steps: Iterable<RunningStep>, traceIds: string[]): Map<string, number> {
  const ids = new Set(traceIds);
  const out = new Map<string, number>();
  for (const s of steps) {
    if (s.ended || !ids.has(s.trace_id)) continue;
    const key = `${s.tenant_id}\u0000${s.trace_id}`;
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

/**
 * A running step keeps its context (read when listed); an ended one its usage record, which holds what a trace lists
 * (the record is made anyway; a captured body is not kept), and the tool it began with.
 */
type MemoryEntry = { ctx: RequestContext; tool: string | undefined; ended?: undefined } | { ended: UsageRecord; tool: string | undefined };

/** A queue of ended steps as two arrays (ids, times) read from a moving head: taking from the front costs nothing. */
class EndedQueue {
  private traceIds: string[] = [];
  private requestIds: string[] = [];
  private untils: number[] = [];
  private head = 0;

  push(traceId: string, requestId: string, until: number): void {
    this.traceIds.push(traceId);
    this.requestIds.push(requestId);
    this.untils.push(until);
  }

  /** Calls `each` for every entry due by `now`, oldest first, and forgets them. */
  takeDue(now: number, each: (traceId: string, requestId: string) => void): void {
    const untils = this.untils;
    let h = this.head;
    if (h >= untils.length || untils[h]! > now) return;
    while (h < untils.length && untils[h]! <= now) {
      each(this.traceIds[h]!, this.requestIds[h]!);
      h++;
    }
    this.head = h;
    // Compacted once the taken part is the larger half: each entry is moved at most once on average.
    if (h > 1024 && h * 2 > untils.length) {
      this.traceIds = this.traceIds.slice(h);
      this.requestIds = this.requestIds.slice(h);
      this.untils = untils.slice(h);
      this.head = 0;
    }
  }
}

function endedStepOf(e: { ended: UsageRecord; tool: string | undefined }): RunningStep {
  const r = e.ended;
  return {
    request_id: r.request_id,
    tenant_id: r.tenant_id,
    agent_id: r.agent_id,
    trace_id: r.trace_id,
    endpoint: r.endpoint,
    tool: e.tool ?? r.tool ?? null,
    model: r.model,
    requested_model: r.requested_model ?? null,
    provider: r.provider,
    stream: r.stream,
    started_at: r.started_at,
    ended: endedOf(r),
  };
}

/** One node: the steps of this process, by trace id. A running step's context is read when listed (a fallback's target shows). */
export class MemoryRunningSteps implements RunningSteps {
  private readonly traces = new Map<string, Map<string, MemoryEntry>>();
  /** Ended steps in the order they ended, each with the time it leaves: dropped as later steps end. */
  private readonly endedQueue = new EndedQueue();
  private running = 0;
  private readonly forget = (traceId: string, requestId: string): void => {
    const steps = this.traces.get(traceId);
    if (!steps) return;
    steps.delete(requestId);
    if (steps.size === 0) this.traces.delete(traceId);
  };

  constructor(private readonly endedTtlMs = ENDED_TTL_MS) {}

  begin(ctx: RequestContext, tool?: string): void {
    let steps = this.traces.get(ctx.traceId);
    if (!steps) this.traces.set(ctx.traceId, (steps = new Map()));
    steps.set(ctx.requestId, { ctx, tool });
    this.running++;
  }

  end(record: UsageRecord): void {
    const now = Date.now();
    this.endedQueue.takeDue(now, this.forget);
    const steps = this.traces.get(record.trace_id);
    const e = steps?.get(record.request_id);
    if (!e || e.ended) return;
    steps!.set(record.request_id, { ended: record.body === null ? record : { ...record, body: null }, tool: e.tool });
    this.running--;
    this.endedQueue.push(record.trace_id, record.request_id, now + this.endedTtlMs);
  }

  /** Steps running now on this node (not those ended lately). */
  get size(): number {
    return this.running;
  }

  async of(traceId: string, tenantId?: string): Promise<RunningStep[]> {
    this.endedQueue.takeDue(Date.now(), this.forget);
    const out: RunningStep[] = [];
    for (const e of this.traces.get(traceId)?.values() ?? []) {
      const step = e.ended ? endedStepOf(e) : stepOf(e.ctx, e.tool);
      if (tenantId === undefined || step.tenant_id === tenantId) out.push(step);
    }
    return out.sort(byStart);
  }

  async counts(traceIds: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const id of new Set(traceIds)) for (const [k, n] of countOf(await this.of(id), [id])) out.set(k, n);
    return out;
  }

  async close(): Promise<void> {
    this.traces.clear();
  }
}

/**
 * Several nodes: `HSET <prefix>running:<trace id> <request id> <step>` and its PEXPIRE in one round trip (auto-pipelined
 * with whatever else the node sends at that moment); the same when it ends, with how it ended. Each entry carries the
 * time it stays listed until, renewed every RUNNING_TTL_MS/3 while the step runs: readers skip entries past it (the step
 * of a node that died, or one ended long enough ago to be in the database), and the key expires once nobody renews it.
 */
export class RedisRunningSteps implements RunningSteps {
  private readonly redis: Redis;
  private readonly mine = new Map<string, RunningStep>();
  /** Entries this node wrote for ended steps, in the order they ended: deleted once past their time (see prune). */
  private readonly endedQueue: Array<{ key: string; requestId: string; until: number }> = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    // Listing steps in flight is best effort.
    this.redis = bestEffortRedis(url, { enableAutoPipelining: true });
    this.timer = setInterval(() => {
      this.write([...this.mine.values()], RUNNING_TTL_MS);
      this.prune(Date.now());
    }, REFRESH_MS);
    this.timer.unref();
  }

  private key(traceId: string): string {
    return `${this.prefix}running:${traceId}`;
  }

  /**
   * HSET, and PEXPIRE unless the step ended (the key then lives at least RUNNING_TTL_MS - REFRESH_MS > ENDED_TTL_MS
   * more). No MULTI: auto-pipelining sends both in one write, and a MULTI costs the event loop twice the commands.
   */
  private write(steps: RunningStep[], ttlMs: number): void {
    const until = Date.now() + ttlMs;
    for (const s of steps) {
      const key = this.key(s.trace_id);
      this.redis.hset(key, s.request_id, JSON.stringify({ ...s, until })).catch(ignore);
      if (!s.ended) this.redis.pexpire(key, RUNNING_TTL_MS).catch(ignore);
    }
  }

  begin(ctx: RequestContext, tool?: string): void {
    const s = stepOf(ctx, tool);
    this.mine.set(s.request_id, s);
    this.write([s], RUNNING_TTL_MS);
  }

  end(record: UsageRecord): void {
    const s = this.mine.get(record.request_id);
    if (!s) return;
    this.mine.delete(record.request_id);
    this.write([{ ...s, ended: endedOf(record) }], ENDED_TTL_MS);
    this.endedQueue.push({ key: this.key(s.trace_id), requestId: s.request_id, until: Date.now() + ENDED_TTL_MS });
  }

  /** A trace that keeps running keeps its key: the entries of its ended steps are deleted, in one pipeline per refresh. */
  private prune(now: number): void {
    let n = 0;
    while (n < this.endedQueue.length && this.endedQueue[n]!.until <= now) n++;
    if (n === 0) return;
    const p = this.redis.pipeline();
    for (const e of this.endedQueue.splice(0, n)) p.hdel(e.key, e.requestId);
    p.exec().catch(ignore);
  }

  private alive(raw: Record<string, string>, now: number): RunningStep[] {
    const out: RunningStep[] = [];
    for (const v of Object.values(raw)) {
      try {
        const { until, ...step } = JSON.parse(v) as RunningStep & { until: number };
        if (until > now) out.push(step);
      } catch {
        // Not a step: skipped.
      }
    }
    return out;
  }

  async of(traceId: string, tenantId?: string): Promise<RunningStep[]> {
    let steps: RunningStep[];
    try {
      steps = this.alive(await this.redis.hgetall(this.key(traceId)), Date.now());
    } catch {
      // Redis away: this node's own running steps still show.
      steps = [...this.mine.values()].filter((s) => s.trace_id === traceId);
    }
    return steps.filter((s) => tenantId === undefined || s.tenant_id === tenantId).sort(byStart);
  }

  async counts(traceIds: string[]): Promise<Map<string, number>> {
    if (traceIds.length === 0) return new Map();
    try {
      const p = this.redis.pipeline();
      for (const id of traceIds) p.hgetall(this.key(id));
      const replies = (await p.exec()) ?? [];
      const now = Date.now();
      return countOf(
        replies.flatMap(([err, raw]) => (err ? [] : this.alive(raw as Record<string, string>, now))),
        traceIds,
      );
    } catch {
      return countOf(this.mine.values(), traceIds);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    // Steps still running here are no longer renewed by anyone: they leave with their TTL.
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
