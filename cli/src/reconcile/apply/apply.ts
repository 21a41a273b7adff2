import type { ChangeSet } from '../diff/change.js';
import type { ApplyEvent, ApplyResult } from './events.js';
import { perform, type ApplyClient } from './perform.js';

export interface ApplyOptions {
  /** true: walk the changes without touching the gateway (plan); false: carry them out. */
  dry: boolean;
}

/**
 * Carries out an ordered change set, one change at a time. On the first refusal it stops:
 * later changes may depend on the failed one, and a re-run plans exactly what is left.
 */
export async function* applyChanges(client: ApplyClient, changeSet: ChangeSet, opts: ApplyOptions): AsyncGenerator<ApplyEvent, ApplyResult> {
  const result: ApplyResult = { dry: opts.dry, done: [], failed: null, skipped: [], keys: {} };
  const { changes } = changeSet;
  for (let index = 0; index < changes.length; index++) {
    const change = changes[index];
    if (result.failed) {
      result.skipped.push(change);
      yield { type: 'skipped', index, change };
      continue;
    }
    yield { type: 'start', index, change, dry: opts.dry };
    if (opts.dry) {
      result.done.push(change);
      yield { type: 'done', index, change, dry: true };
      continue;
    }
    try {
      const { apiKey } = await perform(client, change);
      result.done.push(change);
      if (apiKey) result.keys[change.id] = apiKey;
      // keys travel only in the result, never in per-change events that renderers print
      yield { type: 'done', index, change, dry: false };
    } catch (error) {
      result.failed = { change, error };
      yield { type: 'failed', index, change, error };
    }
  }
  yield { type: 'end', result };
  return result;
}
