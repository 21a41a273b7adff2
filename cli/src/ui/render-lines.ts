import type { Line } from './lines.js';
import type { OutputMode } from './output-mode.js';
import { plainText } from './plain.js';

/** Any list of lines, coloured on a terminal. */
export async function renderLines(lines: Line[], mode: OutputMode, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  if (lines.length === 0) return;
  if (mode !== 'ink') {
    out.write(plainText(lines));
    return;
  }
  const { inkLinesText } = await import('./ink/render-ink.js');
  out.write(inkLinesText(lines));
}
