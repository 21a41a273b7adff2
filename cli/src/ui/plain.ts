import type { Line } from './lines.js';

/** Lines as plain text, no colour: for pipes and CI logs. */
export function plainText(lines: Line[]): string {
  return lines.map((l) => l.text).join('\n') + '\n';
}
