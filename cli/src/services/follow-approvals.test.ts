import { describe, expect, it } from 'vitest';
import type { Approval, ApprovalsQuery, Page } from '../admin-client/types.js';
import { followApprovals } from './follow-approvals.js';

const T0 = Date.parse('2026-11-28T09:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

function approval(id: string, createdMs: number, status: Approval['status'] = 'pending', tenant = 'acme'): Approval {
  const decided = status !== 'pending';
  return {
    id,
    tenant_id: tenant,
    agent_id: 'agt_1',
    trace_id: `trace-${id}`,
    request_id: `req-${id}`,
    tool: 'Bash',
    arguments: { command: 'deploy' },
    rule: { policy_id: 'p', index: 1 },
    reason: null,
    status,
    decided_by: decided && status !== 'timed_out' && status !== 'abandoned' ? 'root' : null,
    comment: null,
    created_at: iso(createdMs),
    decided_at: decided ? iso(createdMs + 1000) : null,
    expires_at: iso(createdMs + 300_000),
  };
}

/**
 * A gateway's approvals as a script of states, one per poll, listed as the admin interface lists them: newest first,
 * `pageSize` a page (pages follow a numeric cursor).
 */
class ScriptedQueue {
  polls = 0;
  queries: ApprovalsQuery[] = [];
  constructor(
    private readonly script: Approval[][],
    private readonly pageSize = 50,
  ) {}

  async listApprovals(q: ApprovalsQuery): Promise<Page<Approval>> {
    this.queries.push(q);
    // Each poll lists the pending ones first: that call moves the script on.
    if (q.status === 'pending' && !q.cursor) this.polls++;
    const state = this.script[Math.min(this.polls, this.script.length) - 1]!;
    const rows = state
      .filter((a) => (!q.status || a.status === q.status) && (!q.tenant_id || a.tenant_id === q.tenant_id) && (!q.trace_id || a.trace_id === q.trace_id))
      .sort((a, b) => b.created_at.localeCompare(a.created_at));
    const from = Number(q.cursor ?? 0);
    const next = from + this.pageSize < rows.length ? String(from + this.pageSize) : null;
    return { data: rows.slice(from, from + this.pageSize), next_cursor: next };
  }
}

async function collect(q: ScriptedQueue, maxPolls: number, filters: { tenant_id?: string } = {}) {
  const batches: string[][] = [];
  for await (const batch of followApprovals(q, { intervalMs: 0, maxPolls, ...filters })) {
    batches.push(batch.map((e) => `${e.kind}:${e.approval.id}:${e.approval.status}${e.seenBefore ? '' : ':new'}`));
  }
  return batches;
}

describe('watching the approvals queue', () => {
  it('shows what waits when the watch begins, then each new call and each decision once; old decisions not at all', async () => {
    const old = approval('old', -60_000, 'approved');
    const a = approval('a', -5_000);
    const q = new ScriptedQueue([
      [old, a],
      [old, a],
      [old, a, approval('b', 2_000)],
      [old, { ...a, status: 'approved', decided_by: 'root' }, approval('b', 2_000)],
      [old, { ...a, status: 'approved', decided_by: 'root' }, approval('b', 2_000, 'denied')],
      [old, { ...a, status: 'approved', decided_by: 'root' }, approval('b', 2_000, 'denied')],
    ]);
    expect(await collect(q, 6)).toEqual([['pending:a:pending:new'], ['pending:b:pending:new'], ['decided:a:approved'], ['decided:b:denied']]);
  });

  it('a call held and decided between two polls still shows, as a decision of a call not seen before', async () => {
    const q = new ScriptedQueue([[], [approval('quick', 1_000, 'timed_out')]]);
    expect(await collect(q, 2)).toEqual([['decided:quick:timed_out:new']]);
  });

  it('a timed-out call approved later shows as a decision', async () => {
    const t = approval('t', -400_000, 'timed_out');
    const q = new ScriptedQueue([[t], [t], [{ ...t, status: 'approved', decided_by: 'ops' }]]);
    expect(await collect(q, 3)).toEqual([['decided:t:approved']]);
  });

  it('a decision on a call that is no longer on the newest page is found further back', async () => {
    const waiting = approval('waiting', -100_000);
    const newer = Array.from({ length: 5 }, (_, i) => approval(`n${i}`, -50_000 + i * 1000, 'approved'));
    const q = new ScriptedQueue([[waiting, ...newer], [{ ...waiting, status: 'denied', decided_by: 'ops' }, ...newer]], 2);
    expect(await collect(q, 2)).toEqual([['pending:waiting:pending:new'], ['decided:waiting:denied']]);
    // The second poll followed the list's pages back to it.
    expect(q.queries.filter((x) => x.cursor).length).toBeGreaterThan(0);
  });

  it("passes the tenant filter on every request, and reads the pending queue's every page", async () => {
    const many = Array.from({ length: 7 }, (_, i) => approval(`p${i}`, i * 1000));
    const q = new ScriptedQueue([[...many, approval('other', 0, 'pending', 'globex')]], 3);
    const [first] = await collect(q, 1, { tenant_id: 'acme' });
    expect(first).toHaveLength(7);
    expect(first![0]).toBe('pending:p0:pending:new');
    for (const query of q.queries) expect(query.tenant_id).toBe('acme');
  });

  it('stops when told to, between polls', async () => {
    const controller = new AbortController();
    const q = new ScriptedQueue([[approval('a', 0)]]);
    const seen: number[] = [];
    for await (const batch of followApprovals(q, { intervalMs: 60_000, signal: controller.signal })) {
      seen.push(batch.length);
      controller.abort();
    }
    expect(seen).toEqual([1]);
  });
});
