import type { SourceLocation } from './file-error.js';

/** The text as written, to turn offsets into line and column. */
export class SourceText {
  private readonly lineStarts: number[] = [0];

  constructor(
    readonly file: string,
    readonly text: string,
  ) {
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') this.lineStarts.push(i + 1);
  }

  at(offset: number): SourceLocation {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { file: this.file, line: lo + 1, col: offset - this.lineStarts[lo] + 1 };
  }
}
