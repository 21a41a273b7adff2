import { line, seg, type Line, type Segment, type Tone } from './lines.js';

/** One table cell: coloured segments, aligned as a whole. */
export interface Cell {
  segments: Segment[];
  align?: 'left' | 'right';
}

export const cell = (text: string, tone: Tone = 'plain', align: Cell['align'] = 'left'): Cell => ({ segments: [seg(text, tone)], align });

const GAP = '  ';

const width = (c: Cell) => c.segments.reduce((n, s) => n + s.text.length, 0);

/**
 * Rows of cells as aligned lines; the padding is plain text so ink and plain output stay identical.
 * `minWidths` keeps rows printed one at a time (a live tail) in the same columns.
 */
export function alignedLines(rows: Cell[][], minWidths: number[] = []): Line[] {
  const columns = Math.max(0, ...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, i) => Math.max(minWidths[i] ?? 0, ...rows.map((r) => (r[i] ? width(r[i]) : 0))));
  return rows.map((row) => {
    const segments: Segment[] = [];
    row.forEach((c, i) => {
      const pad = ' '.repeat(widths[i] - width(c));
      const last = i === row.length - 1;
      if (i > 0) segments.push(seg(GAP));
      if (c.align === 'right') segments.push(seg(pad), ...c.segments);
      else segments.push(...c.segments, ...(last ? [] : [seg(pad)]));
    });
    return line(...trimEnd(segments));
  });
}

/** Empty trailing cells leave no trailing spaces. */
function trimEnd(segments: Segment[]): Segment[] {
  const out = [...segments];
  while (out.length > 0) {
    const last = out[out.length - 1];
    const text = last.text.trimEnd();
    if (text !== '') {
      out[out.length - 1] = { ...last, text };
      break;
    }
    out.pop();
  }
  return out;
}
