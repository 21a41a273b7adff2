// JSON texts as clients write them, for property tests: the same value with other whitespace between its tokens.

/** A deterministic source of choices, cycling through generated numbers. */
export class Choices {
  private i = 0;
  constructor(private readonly xs: readonly number[]) {}
  next(n: number): number {
    return this.xs.length === 0 ? 0 : this.xs[this.i++ % this.xs.length]! % n;
  }
}

const WS = [' ', '\n', '\r', '\t'];

/** Nothing most of the time, else one to three JSON whitespace characters. */
export function ws(c: Choices): string {
  if (c.next(10) < 7) return '';
  let out = '';
  for (let n = 1 + c.next(3); n > 0; n--) out += WS[c.next(WS.length)];
  return out;
}

/** JSON text of `v` with whitespace between tokens as `c` chooses (strings as JSON.stringify writes them). */
export function writeJson(v: unknown, c: Choices): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  const items = Array.isArray(v) ? v.map((x) => writeJson(x, c)) : Object.entries(v).map(([k, x]) => JSON.stringify(k) + ws(c) + ':' + ws(c) + writeJson(x, c));
  const [open, close] = Array.isArray(v) ? ['[', ']'] : ['{', '}'];
  return open + ws(c) + items.join(ws(c) + ',' + ws(c)) + ws(c) + close;
}
