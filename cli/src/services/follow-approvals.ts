import type { Approval, ApprovalsQuery, Page } from '../admin-client/types.js';
import { sleep, unlessAborted } from './follow-traces.js';

export interface FollowApprovalsClient {
  listApprovals(q: ApprovalsQuery): Promise<Page<Approval>>;
}

export interface FollowApprovalsOptions {
  tenant_id?: string;
  trace_id?: string;
  intervalMs: number;
  /** Stop after this many polls (scripts and tests); unbounded when absent. */
  maxPolls?: number;
  signal?: AbortSignal;
}

/** `pending`: a call began to wait (or was waiting when the watch began); `decided`: one seen before changed status. */
export type ApprovalEvent = { kind: 'pending' | 'decided'; approval: Approval; seenBefore: boolean };

/** Pages of a list followed to the end; a server that repeats a cursor ends it. */
async function allPages(client: FollowApprovalsClient, q: ApprovalsQuery, maxPages = Infinity): Promise<Approval[]> {
  const out: Approval[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let n = 0; n < maxPages; n++) {
    const page = await client.listApprovals({ ...q, cursor });
    out.push(...page.data);
    cursor = page.next_cursor ?? undefined;
    if (cursor === undefined || seen.has(cursor)) break;
    seen.add(cursor);
  }
  return out;
}

const byCreation = (a: Approval, b: Approval) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id);

/**
 * Watches the queue: after each poll, yields the calls that began to wait and the decisions made since the previous one
 * (oldest first). The first poll yields every call waiting then. Each poll lists the pending approvals and the newest
 * page of all; a call that left the queue and is not on that page is looked for further back.
 */
export async function* followApprovals(client: FollowApprovalsClient, opts: FollowApprovalsOptions): AsyncGenerator<ApprovalEvent[]> {
  const filters = { tenant_id: opts.tenant_id, trace_id: opts.trace_id };
  /** The status last seen of each approval still worth watching. */
  const known = new Map<string, Approval['status']>();
  for (let poll = 1; ; poll++) {
    const listed = await unlessAborted(
      Promise.all([allPages(client, { ...filters, status: 'pending' }), client.listApprovals(filters)]),
      opts.signal,
    );
    if (!listed) return;
    const [pending, recent] = listed.value;
    const events: ApprovalEvent[] = [];
    const pendingIds = new Set(pending.map((a) => a.id));
    const latest = new Map(recent.data.map((a) => [a.id, a]));

    for (const a of pending) {
      if (known.get(a.id) !== 'pending') events.push({ kind: 'pending', approval: a, seenBefore: known.has(a.id) });
      known.set(a.id, 'pending');
    }
    const left = [...known].filter(([id, status]) => status === 'pending' && !pendingIds.has(id)).map(([id]) => id);
    if (left.some((id) => !latest.has(id))) {
      const older = await unlessAborted(allPages(client, filters, 20), opts.signal);
      if (!older) return;
      const wanted = new Set(left);
      for (const a of older.value) if (wanted.has(a.id) && !latest.has(a.id)) latest.set(a.id, a);
    }
    for (const a of latest.values()) {
      const before = known.get(a.id);
      if (a.status === 'pending' || before === a.status) continue;
      // Decided before the watch began and unchanged since: history, not news.
      if (poll === 1) {
        known.set(a.id, a.status);
        continue;
      }
      events.push({ kind: 'decided', approval: a, seenBefore: before !== undefined });
      known.set(a.id, a.status);
    }
    // A pending one that vanished from every list (deleted with its tenant): no longer watched.
    for (const id of left) if (known.get(id) === 'pending') known.delete(id);
    // Keep only what a later poll can still show changing.
    for (const id of [...known.keys()]) if (!pendingIds.has(id) && !latest.has(id)) known.delete(id);

    if (events.length > 0) yield events.sort((x, y) => byCreation(x.approval, y.approval));
    if (opts.maxPolls !== undefined && poll >= opts.maxPolls) return;
    if (!(await sleep(opts.intervalMs, opts.signal))) return;
  }
}
