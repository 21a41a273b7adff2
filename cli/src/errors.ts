/** An error for people: its message is one sentence saying what went wrong and what to do. */
export class CliError extends Error {
  readonly exitCode: number;
  /** More than one problem: one sentence each, printed on a line of its own. */
  readonly problems: string[];
  /** Already shown to the user (e.g. in apply's progress): only the exit code is left to give. */
  readonly reported: boolean;

  constructor(message: string, opts: { exitCode?: number; problems?: string[]; reported?: boolean } | number = {}) {
    super(message);
    const o = typeof opts === 'number' ? { exitCode: opts } : opts;
    this.name = 'CliError';
    this.exitCode = o.exitCode ?? 1;
    this.problems = o.problems ?? [message];
    this.reported = o.reported ?? false;
  }
}
