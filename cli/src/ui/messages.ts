/** Stand-alone sentences: progress notes go to stderr so stdout stays clean for pipes. */
export function note(text: string): void {
  process.stderr.write(text + '\n');
}

export function say(text: string): void {
  process.stdout.write(text + '\n');
}
