import { createHash } from 'node:crypto';
import type { ChangeSet } from '../reconcile/diff/change.js';

/** JSON with object keys in sorted order: the same plan always gives the same text. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * `sha256:<hex>` of the plan's changes (what happens to which object, from what to what): apply sends it with every
 * write as x-agentgw-change-id, so the audit log groups the entries of one apply, and the same plan gives the same id.
 */
export function planDigest(cs: ChangeSet): string {
  const changes = cs.changes.map((c) => ({ op: c.op, kind: c.kind, id: c.id, before: c.before, after: c.after }));
  return `sha256:${createHash('sha256').update(canonical(changes)).digest('hex')}`;
}
