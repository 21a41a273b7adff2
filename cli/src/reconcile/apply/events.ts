import type { Change, ChangeSet } from '../diff/change.js';

/** Events of the engine, in the order they happen. Nothing here is ever printed by the engine itself. */
export type ApplyEvent =
  | { type: 'plan'; changeSet: ChangeSet }
  | { type: 'start'; index: number; change: Change; dry: boolean }
  | { type: 'done'; index: number; change: Change; dry: boolean }
  | { type: 'failed'; index: number; change: Change; error: unknown }
  | { type: 'skipped'; index: number; change: Change }
  | { type: 'end'; result: ApplyResult };

export interface ApplyResult {
  dry: boolean;
  done: Change[];
  failed: { change: Change; error: unknown } | null;
  /** Changes not attempted because an earlier one failed. */
  skipped: Change[];
  /** New agents' keys by `tenant/name`: handed out once. */
  keys: Record<string, string>;
}
