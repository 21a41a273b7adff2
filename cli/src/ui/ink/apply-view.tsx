import { Box, Text } from 'ink';
import type { ApplyResult } from '../../reconcile/apply/events.js';
import type { Change } from '../../reconcile/diff/change.js';
import { describeError } from '../../describe-error.js';
import { LineView } from './line-view.js';
import { applySummaryLine, changeTitle } from '../lines.js';

export type TaskStatus = 'pending' | 'running' | 'done' | 'failed' | 'skipped';

export interface ApplyViewProps {
  changes: Change[];
  status: TaskStatus[];
  errors: Record<number, unknown>;
  result: ApplyResult | null;
}

const ICON: Record<TaskStatus, { icon: string; color?: string }> = {
  pending: { icon: '·', color: 'gray' },
  running: { icon: '…', color: 'cyan' },
  done: { icon: '✓', color: 'green' },
  failed: { icon: '✗', color: 'red' },
  skipped: { icon: '-', color: 'gray' },
};

/** One row per change with its status, then the outcome. */
export function ApplyView({ changes, status, errors, result }: ApplyViewProps) {
  return (
    <Box flexDirection="column">
      {changes.map((c, i) => {
        const s = status[i] ?? 'pending';
        return (
          <Text key={i}>
            <Text color={ICON[s].color}>{ICON[s].icon}</Text> {changeTitle(c)}
            {s === 'skipped' ? <Text color="gray"> (not done)</Text> : null}
            {s === 'failed' ? <Text color="red">: {describeError(errors[i])}</Text> : null}
          </Text>
        );
      })}
      {result ? (
        <Box marginTop={1}>
          <LineView line={applySummaryLine(result)} />
        </Box>
      ) : null}
    </Box>
  );
}
