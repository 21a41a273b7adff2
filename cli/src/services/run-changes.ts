import { CliError } from '../errors.js';
import type { ApplyEvent, ApplyResult } from '../reconcile/apply/events.js';
import type { ChangeSet } from '../reconcile/diff/change.js';
import { takeoverWarnings } from '../reconcile/diff/takeover.js';
import { reconcile } from '../reconcile/engine.js';
import { confirm } from '../ui/confirm.js';
import { note } from '../ui/messages.js';
import { applyJson, jsonText, planJson } from '../ui/json.js';
import { changeTitle, keyLines, textLine } from '../ui/lines.js';
import { canPrompt, outputMode, type OutputMode } from '../ui/output-mode.js';
import { renderApply } from '../ui/render-apply.js';
import { renderLines } from '../ui/render-lines.js';
import { renderPlan } from '../ui/render-plan.js';
import { describeError } from '../describe-error.js';
import { connect, type ConnectionOptions } from './connection.js';
import { loadDesired, locatePlanError, type DesiredOptions } from './desired-state.js';
import { writeKeysFile } from './keys-file.js';
import { planDigest } from './plan-digest.js';

export interface RunFlags extends ConnectionOptions, DesiredOptions {
  autoApprove?: boolean;
  keysOut?: string;
  prune?: boolean;
  json?: boolean;
}

/** `apply` makes the gateway match the desired state and hands out new agents' keys; `destroy` deletes what it names. */
export type RunCommand = 'apply' | 'destroy';

const VERB: Record<RunCommand, string> = { apply: 'Apply', destroy: 'Destroy' };

/**
 * apply and destroy: the reconcile engine with `dry: false`, paused after its plan event. The plan is shown first;
 * nothing to change ends there (exit 0); otherwise the changes run once approved (--auto-approve, or yes on a terminal).
 */
export async function runChanges(command: RunCommand, flags: RunFlags): Promise<number> {
  const mode = outputMode(flags);
  const desired = await loadDesired(flags, command);
  const client = connect(flags);
  const run = reconcile(client, desired.content, { mode: command === 'apply' ? 'sync' : 'destroy', prune: flags.prune, dry: false });
  let first: IteratorResult<ApplyEvent, ApplyResult>;
  try {
    first = await run.next();
  } catch (e) {
    throw locatePlanError(e, desired);
  }
  if (first.done || first.value.type !== 'plan') throw new Error('the engine produced no plan');
  const changeSet = first.value.changeSet;
  // The writes that carry out this plan name it: the audit log keeps the digest as each entry's change_id.
  client.useChangeId(planDigest(changeSet));
  const nothing: ApplyResult = { dry: false, done: [], failed: null, skipped: [], keys: {} };

  for (const w of takeoverWarnings(changeSet)) note(w);
  if (mode !== 'json') await renderPlan(changeSet, mode);
  if (changeSet.changes.length === 0) {
    await run.return(nothing);
    return finish(command, changeSet, nothing, flags, mode);
  }
  if (!flags.autoApprove) {
    if (mode === 'json') {
      process.stdout.write(jsonText(planJson(changeSet)));
      await run.return(nothing);
      throw new CliError(`${command} --json cannot ask for confirmation: pass --auto-approve to ${command} the plan above`);
    }
    if (!canPrompt()) {
      await run.return(nothing);
      throw new CliError(`${command} asks for confirmation, but this is not an interactive terminal: pass --auto-approve to ${command} without asking`);
    }
    if (!(await confirm(`${VERB[command]} these changes?`))) {
      await run.return(nothing);
      await renderLines([textLine(`${VERB[command]} cancelled: nothing was changed.`, 'muted')], mode);
      return 1;
    }
  }
  const result = await renderApply(run, changeSet, mode);
  return finish(command, changeSet, result, flags, mode);
}

async function finish(command: RunCommand, changeSet: ChangeSet, result: ApplyResult, flags: RunFlags, mode: OutputMode): Promise<number> {
  // keys of the agents that were created are handed out even when a later change failed
  if (flags.keysOut) await writeKeysFile(flags.keysOut, result.keys);
  const count = Object.keys(result.keys).length;
  if (mode === 'json') {
    const keys = command === 'destroy' ? {} : flags.keysOut ? { keysFile: flags.keysOut } : { keys: result.keys };
    process.stdout.write(jsonText(applyJson(changeSet, result, keys)));
  } else if (flags.keysOut) {
    if (count > 0) await renderLines([textLine(`Wrote ${count} new agent key${count === 1 ? '' : 's'} to ${flags.keysOut} (mode 0600).`)], mode);
  } else {
    await renderLines(keyLines(result.keys), mode);
  }
  if (result.failed) {
    // the progress already said what failed and why; JSON readers get one sentence on stderr as well
    const message = `stopped at "${changeTitle(result.failed.change)}": ${describeError(result.failed.error)}`;
    throw new CliError(message, { reported: mode !== 'json' });
  }
  return 0;
}
