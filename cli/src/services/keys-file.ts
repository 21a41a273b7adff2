import { chmod, readFile, writeFile } from 'node:fs/promises';
import { CliError } from '../errors.js';

/**
 * Writes new agents' keys as JSON `{ "<tenant>/<name>": "<key>" }` with mode 0600.
 * Keys already in the file are kept, so a re-run after a partial failure loses none.
 */
export async function writeKeysFile(path: string, keys: Record<string, string>): Promise<void> {
  let existing: Record<string, string> = {};
  try {
    const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) existing = parsed as Record<string, string>;
  } catch {
    // absent or not JSON: start afresh
  }
  try {
    await writeFile(path, JSON.stringify({ ...existing, ...keys }, null, 2) + '\n', { mode: 0o600 });
    // mode applies only when the file is created
    await chmod(path, 0o600);
  } catch (e) {
    throw new CliError(`cannot write the keys file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}
