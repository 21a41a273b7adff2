import { CliError } from '../../errors.js';
import { readStackState, type StackState } from './cdktf/desired-state.js';
import { CdktfStackError } from './cdktf/stack-json.js';
import { formatPath } from './locate.js';
import type { DesiredSource } from './merge.js';

/** A problem list of a stack as one sentence per line is too long for one error line: the first issue, and how many more. */
function stackProblem(e: CdktfStackError): string {
  const [first] = e.issues;
  const more = e.issues.length > 1 ? ` (and ${e.issues.length - 1} more problem${e.issues.length > 2 ? 's' : ''})` : '';
  return `${e.file}: ${first.address}: ${first.message}${more}`;
}

/** Desired state synthesised by a CDKTF app: DIR is the synthesized stack (cdktf.out/stacks/NAME) or its cdk.tf.json. */
export async function readCdktf(dir: string): Promise<DesiredSource> {
  let stack: StackState;
  try {
    stack = readStackState(dir);
  } catch (e) {
    throw new CliError(`cannot read the CDKTF app in ${dir}: ${e instanceof CdktfStackError ? stackProblem(e) : (e as Error).message}`);
  }
  return {
    file: stack.file,
    content: stack.content,
    describe(path) {
      const [section, index, ...rest] = path;
      const address = stack.addresses[section as keyof StackState['addresses']]?.[index as number];
      if (!address) return `${stack.file} (${formatPath(path)})`;
      return `${stack.file}: ${address}${rest.length > 0 ? `.${formatPath(rest)}` : ''}`;
    },
  };
}
