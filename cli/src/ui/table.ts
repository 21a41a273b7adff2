import { jsonText } from './json.js';
import type { OutputMode } from './output-mode.js';

export interface Column<T> {
  header: string;
  value: (row: T) => string;
}

/** Rows as aligned columns (or the raw objects as JSON). */
export function renderTable<T>(rows: T[], columns: Column<T>[], mode: OutputMode, out: NodeJS.WritableStream = process.stdout): void {
  if (mode === 'json') {
    out.write(jsonText(rows));
    return;
  }
  if (rows.length === 0) {
    out.write('(none)\n');
    return;
  }
  const cells = [columns.map((c) => c.header), ...rows.map((r) => columns.map((c) => c.value(r)))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  for (const row of cells) out.write(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ') + '\n');
}

export function formatLabels(labels: Record<string, string> | undefined): string {
  const entries = Object.entries(labels ?? {});
  return entries.length === 0 ? '-' : entries.map(([k, v]) => `${k}=${v}`).join(',');
}
