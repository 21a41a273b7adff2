import { describeError } from './describe-error.js';
import { CliError } from './errors.js';

/** Runs a command; any error ends as one sentence on stderr and exit 1 (a stack only with AGENTGW_DEBUG=1). */
export async function runAction(action: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await action();
  } catch (e) {
    process.stderr.write(`Error: ${describeError(e)}\n`);
    if (process.env.AGENTGW_DEBUG && e instanceof Error && e.stack) process.stderr.write(e.stack + '\n');
    process.exitCode = e instanceof CliError ? e.exitCode : 1;
  }
}
