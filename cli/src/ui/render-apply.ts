import type { ApplyEvent, ApplyResult } from '../reconcile/apply/events.js';
import type { ChangeSet } from '../reconcile/diff/change.js';
import { applyEventLine, applySummaryLine, blankLine } from './lines.js';
import type { OutputMode } from './output-mode.js';
import { plainText } from './plain.js';

/** Shows progress while the engine applies; returns the engine's result. JSON mode prints nothing here. */
export async function renderApply(
  events: AsyncGenerator<ApplyEvent, ApplyResult>,
  changeSet: ChangeSet,
  mode: OutputMode,
  out: NodeJS.WriteStream = process.stdout,
): Promise<ApplyResult> {
  if (mode === 'ink') {
    const { inkApply } = await import('./ink/ink-apply.js');
    return inkApply(events, changeSet, out);
  }
  let result: ApplyResult | null = null;
  for await (const e of events) {
    if (mode === 'plain') {
      const l = applyEventLine(e);
      if (l) out.write(plainText([l]));
    }
    if (e.type === 'end') result = e.result;
  }
  if (!result) throw new Error('the apply engine ended without a result');
  if (mode === 'plain') out.write(plainText([blankLine(), applySummaryLine(result)]));
  return result;
}
