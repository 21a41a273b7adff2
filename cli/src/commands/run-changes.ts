import type { AdminClient } from '../admin-client/admin-client.js';
import { describeError } from '../describe-error.js';
import { CliError } from '../errors.js';
import { applyChanges } from '../reconcile/apply/apply.js';
import type { ApplyResult } from '../reconcile/apply/events.js';
import type { ChangeSet } from '../reconcile/diff/change.js';
import { changeTitle } from '../ui/lines.js';
import { confirm } from '../ui/confirm.js';
import { applyJson, jsonText } from '../ui/json.js';
import { keyLines, textLine } from '../ui/lines.js';
import { canPrompt, type OutputMode } from '../ui/output-mode.js';
import { renderApply } from '../ui/render-apply.js';
import { renderLines } from '../ui/render-lines.js';
import { renderPlan } from '../ui/render-plan.js';
import { writeKeysFile } from '../services/keys-file.js';

export interface RunFlags {
  autoApprove?: boolean;
  keysOut?: string;
}

/** `Apply` hands out new agents' keys; `Destroy` never creates any. */
export type Verb = 'Apply' | 'Destroy';

/** Fails before any work when a question would be needed but cannot be asked. */
export function requireApproval(command: string, flags: RunFlags, mode: OutputMode): void {
  if (flags.autoApprove) return;
  if (mode === 'json') throw new CliError(`${command} --json cannot ask for confirmation: pass --auto-approve`);
  if (!canPrompt()) throw new CliError(`${command} asks for confirmation, but this is not an interactive terminal: pass --auto-approve to ${command} without asking`);
}

/** Shared by apply and destroy: show the plan, ask, carry it out, hand out keys, report. */
export async function runChanges(client: AdminClient, changeSet: ChangeSet, flags: RunFlags, mode: OutputMode, verb: Verb): Promise<number> {
  if (mode !== 'json') await renderPlan(changeSet, mode);
  const empty: ApplyResult = { dry: false, done: [], failed: null, skipped: [], keys: {} };
  if (changeSet.changes.length === 0) return finish(changeSet, empty, flags, mode, verb);
  if (!flags.autoApprove && !(await confirm(`${verb} these changes?`))) {
    await renderLines([textLine(`${verb} cancelled: nothing was changed.`, 'muted')], mode);
    return 1;
  }
  const result = await renderApply(applyChanges(client, changeSet, { dry: false }), changeSet, mode);
  return finish(changeSet, result, flags, mode, verb);
}

async function finish(changeSet: ChangeSet, result: ApplyResult, flags: RunFlags, mode: OutputMode, verb: Verb): Promise<number> {
  // keys of the agents that were created are handed out even when a later change failed
  if (flags.keysOut) await writeKeysFile(flags.keysOut, result.keys);
  const count = Object.keys(result.keys).length;
  if (mode === 'json') {
    const keys = verb === 'Destroy' ? {} : flags.keysOut ? { keysFile: flags.keysOut } : { keys: result.keys };
    process.stdout.write(jsonText(applyJson(changeSet, result, keys)));
  } else if (flags.keysOut) {
    if (count > 0) await renderLines([textLine(`Wrote ${count} new agent key${count === 1 ? '' : 's'} to ${flags.keysOut} (mode 0600).`)], mode);
  } else {
    await renderLines(keyLines(result.keys), mode);
  }
  if (result.failed) {
    throw new CliError(`stopped at "${changeTitle(result.failed.change)}": ${describeError(result.failed.error)}`);
  }
  return 0;
}
