/** ink on a terminal, plain lines in pipes and CI logs, one JSON document with --json. */
export type OutputMode = 'ink' | 'plain' | 'json';

export function outputMode(opts: { json?: boolean }, stream: { isTTY?: boolean } = process.stdout): OutputMode {
  if (opts.json) return 'json';
  return stream.isTTY ? 'ink' : 'plain';
}

/** Whether a question can be asked: both ends must be a terminal. */
export function canPrompt(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY);
}
