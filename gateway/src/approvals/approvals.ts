// Approvals (CONTRACT: "Tool rules and approvals"): a call an `approve` rule holds waits here for a person's decision,
// its timeout, or its client leaving. Decisions are written to the shared database; the node that holds a call learns
// of one at once when it was made there, through Redis pub/sub when counters are Redis, and by polling the database
// every pollMs while it holds anything (so a lost message still arrives within a second).
import type { Redis } from 'ioredis';
import { bestEffortRedis } from '../storage/redis-client.js';
import type { Approval } from '../contract/index.js';
import { generateId } from '../security/keys.js';
import type { NewApproval, Store } from '../storage/store.js';
import type { ApprovalNotifier } from './approval-notifier.js';

/** How long an approval given after its timeout lets the same call pass (once) in its trace. */
export const LATE_GRANT_MS = 15 * 60_000;

/** A pending approval this long past its expiry has no node holding it any more (its node stopped): it is abandoned. */
export const ORPHAN_GRACE_MS = 60_000;
const SWEEP_MS = 30_000;

/** What a hold can be cut short by: the client leaving (a ClientAbort on /v1, an AbortSignal on /mcp). */
export interface HoldSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface ApprovalsOptions {
  timeoutS: number;
  /** Keep-alives of a stream (or leading whitespace of an answer) that waits, this often. */
  keepAliveMs: number;
  /** How often a node that holds calls reads their rows (default 500 ms). */
  pollMs?: number;
  notifier?: ApprovalNotifier;
  /** Redis to announce decisions on, when counters are Redis. */
  redis?: { url: string; prefix: string };
  /**
   * Keeps a trace's spend in the counters' memory while one of its calls is held (Counters.keepTrace): the answer's cost
   * was settled before the wait, its usage row is written after it.
   */
  keepTrace?: (traceKey: string) => () => void;
  log?: { warn: (obj: object, msg: string) => void };
}

/** A call to hold: the approval row less what the service fills in. */
export type HoldRequest = Omit<NewApproval, 'id' | 'created_at' | 'expires_at'>;

interface Waiter {
  resolve(a: Approval): void;
  /** Ends the hold as abandoned (unless a decision was written first), with this comment on the approval; resolves once released. */
  abandon(comment: string): Promise<void>;
}

/** The comment on an approval a node abandoned as it stopped. */
export const NODE_STOPPED = 'the gateway node stopped before a decision';

export class Approvals {
  readonly timeoutS: number;
  readonly keepAliveMs: number;
  private readonly pollMs: number;
  private readonly held = new Map<string, Waiter>();
  private poller: NodeJS.Timeout | undefined;
  private readonly sweeper: NodeJS.Timeout;
  private polling = false;
  /** Set once the node drains: every held call is abandoned, and one held from then on is abandoned at once. */
  private draining = false;
  private readonly sub: Redis | undefined;
  private readonly pub: Redis | undefined;
  private readonly channel: string | undefined;

  constructor(
    private readonly store: Store,
    private readonly opts: ApprovalsOptions,
  ) {
    this.timeoutS = opts.timeoutS;
    this.keepAliveMs = opts.keepAliveMs;
    this.pollMs = opts.pollMs ?? 500;
    this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), SWEEP_MS);
    this.sweeper.unref();
    if (opts.redis) {
      this.channel = `${opts.redis.prefix}approvals`;
      // Redis away: the database poll still brings decisions.
      this.pub = bestEffortRedis(opts.redis.url);
      // Subscriptions are renewed by ioredis on reconnect, so it may queue its SUBSCRIBE while offline.
      this.sub = bestEffortRedis(opts.redis.url, { enableOfflineQueue: true });
      this.sub.subscribe(this.channel).catch(() => undefined);
      this.sub.on('message', (_channel: string, id: string) => {
        if (this.held.has(id)) void this.refresh([id]);
      });
    }
  }

  /** Keeps the trace (tenant-qualified key, as the counters name it) in the counters' memory until the returned function runs. */
  keepTrace(traceKey: string): () => void {
    return this.opts.keepTrace?.(traceKey) ?? (() => undefined);
  }

  /** Calls this node holds now. */
  get holding(): number {
    return this.held.size;
  }

  /**
   * The pass an approval after the timeout left for this call of this agent in this trace, taken (once): its approval
   * id, or null (trace ids are the client's to choose: another agent naming the same trace gets none).
   * A database that cannot answer gives no pass (fail closed).
   */
  async takeGrant(tenantId: string, agentId: string, traceId: string, callHash: string): Promise<string | null> {
    const now = Date.now();
    return this.store.takeApprovalGrant({ tenantId, agentId, traceId, callHash }, new Date(now - LATE_GRANT_MS).toISOString(), new Date(now).toISOString()).catch(() => null);
  }

  /**
   * Holds a call until a person decides it, it times out, or `signal` aborts (the client left): answers the approval as
   * it ended (status approved, denied, timed_out or abandoned). `onCreated` hears of the pending approval first.
   */
  async hold(req: HoldRequest, signal: HoldSignal | undefined, onCreated?: (a: Approval) => void): Promise<Approval> {
    const created = new Date();
    const approval = await this.store.createApproval({
      ...req,
      id: generateId('apr'),
      created_at: created.toISOString(),
      expires_at: new Date(created.getTime() + this.timeoutS * 1000).toISOString(),
    });
    onCreated?.(approval);
    this.opts.notifier?.notify(approval);
    return new Promise<Approval>((resolve) => {
      let done = false;
      const finish = (a: Approval) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.held.delete(approval.id);
        if (this.held.size === 0) this.stopPolling();
        resolve(a);
      };
      // The holder ends it: unless a decision was written first (then that one stands).
      let closing: Promise<void> | undefined;
      const close = (status: 'timed_out' | 'abandoned', comment: string | null = null): Promise<void> => {
        if (done) return Promise.resolve();
        const at = new Date().toISOString();
        closing ??= this.store
          .closeApproval(approval.id, status, at, comment)
          .then((a) => finish(a && a.status !== 'pending' ? a : { ...approval, status, decided_at: at, comment }))
          // The database cannot say: the call is refused (fail closed), as its end says.
          .catch(() => finish({ ...approval, status, decided_at: at, comment }));
        return closing;
      };
      const timer = setTimeout(() => void close('timed_out'), Math.max(0, Date.parse(approval.expires_at) - Date.now()));
      const onAbort = () => void close('abandoned');
      this.held.set(approval.id, { resolve: finish, abandon: (comment) => close('abandoned', comment) });
      this.startPolling();
      if (this.draining) void close('abandoned', NODE_STOPPED);
      else if (signal?.aborted) void close('abandoned');
      else signal?.addEventListener('abort', onAbort);
    });
  }

  /**
   * After a decision was committed (POST /approvals/{id}/approve|deny on any node): the call is released here if this
   * node holds it, and the other nodes are told through Redis (they also find it by polling).
   */
  announce(approval: Approval): void {
    if (approval.status !== 'pending') this.held.get(approval.id)?.resolve(approval);
    if (this.pub && this.channel) this.pub.publish(this.channel, approval.id).catch(() => undefined);
  }

  /**
   * The node starts draining: every call it holds is abandoned at once (a decision written first still stands), and
   * so is any call held from now on, so that the drain waits for no person. Resolves once the held calls are released.
   */
  async drain(): Promise<void> {
    this.draining = true;
    await Promise.all([...this.held.values()].map((w) => w.abandon(NODE_STOPPED)));
  }

  private startPolling(): void {
    if (this.poller) return;
    this.poller = setInterval(() => void this.refresh([...this.held.keys()]), this.pollMs);
    this.poller.unref();
  }

  private stopPolling(): void {
    clearInterval(this.poller);
    this.poller = undefined;
  }

  /** Reads the rows of held calls and releases the decided ones. */
  private async refresh(ids: string[]): Promise<void> {
    if (ids.length === 0 || this.polling) return;
    this.polling = true;
    try {
      for (const a of await this.store.settledApprovals(ids)) this.held.get(a.id)?.resolve(a);
    } catch {
      // The database is away: the next poll tries again; the timeout still ends the hold.
    } finally {
      this.polling = false;
    }
  }

  /**
   * Ends the pending approvals that no node holds any more (a node that stopped while holding calls): past their expiry
   * by ORPHAN_GRACE_MS, they are abandoned, so nobody approves a call whose client is gone. Answers how many.
   */
  async sweep(now = Date.now()): Promise<number> {
    let ended = 0;
    let cursor: string | undefined;
    // Oldest pending ones are on the last pages (newest first): a few pages cover any real queue.
    for (let pages = 0; pages < 20; pages++) {
      const page = await this.store.listApprovals({ status: 'pending', limit: 200, cursor });
      for (const a of page.data) {
        if (this.held.has(a.id) || Date.parse(a.expires_at) > now - ORPHAN_GRACE_MS) continue;
        const closed = await this.store.closeApproval(a.id, 'abandoned', new Date(now).toISOString());
        if (closed?.status === 'abandoned') ended++;
      }
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    return ended;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.stopPolling();
    await this.opts.notifier?.drain();
    await Promise.all([this.sub, this.pub].map((r) => r?.quit().catch(() => r.disconnect())));
  }
}
