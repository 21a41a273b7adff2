import { DeclarativeFile } from '@agentgw/gateway/contract';
import { CliError } from '../../errors.js';
import { formatPath } from './locate.js';
import type { DesiredSource } from './merge.js';

/** Kept in a variable so the compiler does not resolve it: @agentgw/cdktf depends on this package, not the reverse. */
const CDKTF_MODULE = '@agentgw/cdktf';

interface CdktfModule {
  desiredStateFromCdktf(dir: string): unknown;
}

/** Desired state synthesised from a CDKTF app directory by @agentgw/cdktf. */
export async function readCdktf(dir: string, moduleName: string = CDKTF_MODULE): Promise<DesiredSource> {
  let mod: CdktfModule;
  try {
    mod = (await import(moduleName)) as CdktfModule;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new CliError(`--cdktf needs the ${moduleName} package, which is not installed or not built (run npm run build)`);
    }
    throw new CliError(`cannot load ${moduleName}: ${(e as Error).message}`);
  }
  if (typeof mod.desiredStateFromCdktf !== 'function') {
    throw new CliError(`${moduleName} does not export desiredStateFromCdktf(dir); update it to a version that does`);
  }
  let raw: unknown;
  try {
    raw = await mod.desiredStateFromCdktf(dir);
  } catch (e) {
    throw new CliError(`cannot read the CDKTF app in ${dir}: ${(e as Error).message}`);
  }
  const res = DeclarativeFile.safeParse(raw);
  if (!res.success) {
    const issue = res.error.issues[0];
    throw new CliError(`the CDKTF app in ${dir} gives an invalid desired state: ${formatPath(issue.path)}: ${issue.message}`);
  }
  return { file: `cdktf ${dir}`, content: res.data };
}
