import { isMap, isNode, isPair, isScalar, isSeq, type Document, type Node } from 'yaml';
import type { SourceLocation } from './file-error.js';
import type { SourceText } from './source-text.js';

export type Path = readonly PropertyKey[];

/** Maps paths of the parsed data back to where they were written. */
export class Locator {
  constructor(
    private readonly source: SourceText,
    private readonly doc: Document,
    /** From offsets of the parsed (interpolated) text to offsets of the written text. */
    private readonly toSource: (offset: number) => number = (o) => o,
  ) {}

  get file(): string {
    return this.source.file;
  }

  /** An offset of the parsed text as file:line:col of the written text. */
  at(offset: number): SourceLocation {
    return this.source.at(this.toSource(offset));
  }

  /** The deepest node that exists along `path`; with `key`, the key of that map entry instead of its value. */
  locate(path: Path, key?: string): SourceLocation {
    let node: unknown = this.doc.contents;
    let found: Node | null = isNode(node) ? node : null;
    const steps = key === undefined ? [...path] : [...path, key];
    for (let i = 0; i < steps.length; i++) {
      const seg = steps[i];
      const isLastKey = key !== undefined && i === steps.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        const target = isLastKey || pair.value == null ? pair.key : pair.value;
        if (isNode(target)) found = target;
        node = isLastKey ? null : pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        const item = node.items[seg];
        if (!isNode(item)) break;
        found = item;
        node = item;
      } else break;
    }
    return this.at(found?.range?.[0] ?? 0);
  }
}

/** `policies[0].rules.pii` */
export function formatPath(path: Path): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out;
}
