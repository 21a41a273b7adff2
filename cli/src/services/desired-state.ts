import { CliError } from '../errors.js';
import { PlanError } from '../reconcile/diff/plan-error.js';
import { readCdktf } from '../reconcile/file/cdktf.js';
import { mergeDesired, type Desired, type DesiredSource } from '../reconcile/file/merge.js';
import { readDeclarativeFiles } from '../reconcile/file/read-files.js';

export interface DesiredOptions {
  file?: string[];
  cdktf?: string;
}

/** The desired state from `-f` files and/or a `--cdktf` app, merged into one, with where each object was declared. */
export async function loadDesired(opts: DesiredOptions, command: string, env: NodeJS.ProcessEnv = process.env): Promise<Desired> {
  const files = opts.file ?? [];
  if (files.length === 0 && !opts.cdktf) throw new CliError(`${command} needs a desired state: pass -f FILE (or a directory), or --cdktf DIR`);
  const sources: DesiredSource[] = files.length > 0 ? await readDeclarativeFiles(files, env) : [];
  if (opts.cdktf) sources.push(await readCdktf(opts.cdktf));
  return mergeDesired(sources);
}

/** A plan problem pinned to where the desired state says it: `file:line:col: ...` (or the resource address), once each. */
export function locatePlanError(e: unknown, desired: Desired): unknown {
  if (!(e instanceof PlanError)) return e;
  const problems = e.problems.map((p) => {
    const at = p.site && desired.where(p.site);
    return at ? `${at}: ${p.message}` : p.message;
  });
  return new CliError(problems.join('; '), { problems });
}
