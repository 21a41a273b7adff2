import type { Command } from 'commander';
import { describeError } from './describe-error.js';
import { CliError } from './errors.js';

/** The sentences an error ends as: one per problem, each printed once. */
function errorLines(e: unknown): string[] {
  if (e instanceof CliError) return e.reported ? [] : e.problems.map((p) => p.replace(/\s*\n\s*/g, ' ').trim());
  return [describeError(e)];
}

/** Runs a command; any error ends as sentences on stderr and exit 1 (a stack only with AGENTGW_DEBUG=1). */
export async function runAction(action: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await action();
  } catch (e) {
    for (const text of errorLines(e)) process.stderr.write(`Error: ${text}\n`);
    if (process.env.AGENTGW_DEBUG && e instanceof Error && e.stack) process.stderr.write(e.stack + '\n');
    process.exitCode = e instanceof CliError ? e.exitCode : 1;
  }
}

/**
 * A commander action: positionals, then the command's own flags merged with the global connection flags.
 * (commander hands positionals, then its options object, then the command.)
 */
export function act<A extends unknown[]>(fn: (...args: A) => Promise<number>) {
  return (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const positional = args.slice(0, -2);
    return runAction(() => fn(...([...positional, cmd.optsWithGlobals()] as A)));
  };
}
