import { stringify } from 'yaml';
import { jsonText } from './json.js';
import type { OutputMode } from './output-mode.js';

/** One object for people (YAML) or for programs (JSON). */
export function renderDocument(doc: unknown, mode: OutputMode, out: NodeJS.WritableStream = process.stdout): void {
  out.write(mode === 'json' ? jsonText(doc) : stringify(doc, { lineWidth: 0 }));
}
