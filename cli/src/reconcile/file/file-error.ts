export interface SourceLocation {
  file: string;
  /** 1-based */
  line: number;
  /** 1-based */
  col: number;
}

/** A problem in a declarative file, pinned to file:line:col. */
export class FileError extends Error {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly detail: string;

  constructor(loc: SourceLocation, detail: string) {
    super(`${loc.file}:${loc.line}:${loc.col}: ${detail}`);
    this.name = 'FileError';
    this.file = loc.file;
    this.line = loc.line;
    this.col = loc.col;
    this.detail = detail;
  }
}

export function formatLocation(loc: SourceLocation): string {
  return `${loc.file}:${loc.line}:${loc.col}`;
}
