import type { ChangeSet } from '../reconcile/diff/change.js';
import { jsonText, planJson } from './json.js';
import { planLines } from './lines.js';
import type { OutputMode } from './output-mode.js';
import { plainText } from './plain.js';

/** Writes the plan: coloured on a terminal, the same lines as plain text elsewhere, or one JSON document. */
export async function renderPlan(changeSet: ChangeSet, mode: OutputMode, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  if (mode === 'ink') {
    // ink costs a few hundred ms to load: only terminals pay for it
    const { inkPlanText } = await import('./ink/render-ink.js');
    out.write(inkPlanText(changeSet));
    return;
  }
  out.write(planText(changeSet, mode));
}

export function planText(changeSet: ChangeSet, mode: 'plain' | 'json'): string {
  return mode === 'json' ? jsonText(planJson(changeSet)) : plainText(planLines(changeSet));
}
