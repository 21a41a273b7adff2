import type { ApplyResult } from '../reconcile/apply/events.js';
import type { Change, ChangeSet } from '../reconcile/diff/change.js';
import { describeError } from '../describe-error.js';
import { AdminApiError } from '../admin-client/errors.js';

/** The public shape of a change: internal bookkeeping (server ids, ownership) stays out. */
function changeJson(c: Change) {
  return { op: c.op, kind: c.kind, id: c.id, before: c.before, after: c.after, changes: c.changes };
}

export function planJson(cs: ChangeSet) {
  return { changes: cs.changes.map(changeJson), summary: cs.summary };
}

function errorJson(e: unknown) {
  if (e instanceof AdminApiError) return { status: e.status, code: e.code, message: e.message };
  return { status: null, code: null, message: describeError(e) };
}

/** Plan plus what happened to each change; keys only when they were not written to a file. */
export function applyJson(cs: ChangeSet, r: ApplyResult, opts: { keys?: Record<string, string>; keysFile?: string }) {
  const status = (c: Change) => (r.done.includes(c) ? 'done' : r.failed?.change === c ? 'failed' : 'not_done');
  return {
    ...planJson(cs),
    results: cs.changes.map((c) => ({
      op: c.op,
      kind: c.kind,
      id: c.id,
      status: status(c),
      ...(r.failed?.change === c ? { error: errorJson(r.failed.error) } : {}),
    })),
    ok: r.failed === null,
    ...(opts.keys ? { keys: opts.keys } : {}),
    ...(opts.keysFile ? { keys_file: opts.keysFile } : {}),
  };
}

export function jsonText(doc: unknown): string {
  return JSON.stringify(doc, null, 2) + '\n';
}
