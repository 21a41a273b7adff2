import { render } from 'ink';
import type { ApplyEvent, ApplyResult } from '../../reconcile/apply/events.js';
import type { ChangeSet } from '../../reconcile/diff/change.js';
import { ApplyView, type TaskStatus } from './apply-view.js';

/** Live progress: one row per change, updated as the engine's events arrive. */
export async function inkApply(events: AsyncGenerator<ApplyEvent, ApplyResult>, changeSet: ChangeSet, out: NodeJS.WriteStream): Promise<ApplyResult> {
  const status: TaskStatus[] = changeSet.changes.map(() => 'pending');
  const errors: Record<number, unknown> = {};
  let result: ApplyResult | null = null;
  const view = () => <ApplyView changes={changeSet.changes} status={[...status]} errors={errors} result={result} />;
  const app = render(view(), { stdout: out, exitOnCtrlC: false });
  try {
    for await (const e of events) {
      if (e.type === 'start') status[e.index] = 'running';
      else if (e.type === 'done') status[e.index] = 'done';
      else if (e.type === 'failed') {
        status[e.index] = 'failed';
        errors[e.index] = e.error;
      } else if (e.type === 'skipped') status[e.index] = 'skipped';
      else if (e.type === 'end') result = e.result;
      app.rerender(view());
    }
  } finally {
    app.unmount();
    await app.waitUntilExit();
  }
  if (!result) throw new Error('the apply engine ended without a result');
  return result;
}
