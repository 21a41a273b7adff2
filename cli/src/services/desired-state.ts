import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { CliError } from '../errors.js';
import { readCdktf } from '../reconcile/file/cdktf.js';
import { mergeSources, type DesiredSource } from '../reconcile/file/merge.js';
import { readDeclarativeFiles } from '../reconcile/file/read-files.js';

export interface DesiredOptions {
  file?: string[];
  cdktf?: string;
}

/** The desired state from `-f` files and/or a `--cdktf` app, merged into one. */
export async function loadDesired(opts: DesiredOptions, command: string, env: NodeJS.ProcessEnv = process.env): Promise<DeclarativeFile> {
  const files = opts.file ?? [];
  if (files.length === 0 && !opts.cdktf) throw new CliError(`${command} needs a desired state: pass -f FILE (or a directory), or --cdktf DIR`);
  const sources: DesiredSource[] = files.length > 0 ? await readDeclarativeFiles(files, env) : [];
  if (opts.cdktf) sources.push(await readCdktf(opts.cdktf));
  return mergeSources(sources);
}
