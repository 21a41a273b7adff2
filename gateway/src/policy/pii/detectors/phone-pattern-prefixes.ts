/**
 * The first digits a libphonenumber-js number pattern can start with. Its patterns use a small grammar: digits, `\d`,
 * classes such as `[2-9]`, groups `(?:…|…)`, and the quantifiers `?` and `{n}`, `{n,m}`; that is enough to work out,
 * for each pattern, the prefixes of the numbers it matches, and so which patterns a number needs to be tested against.
 */

type Node =
  | { kind: 'set'; chars: string[] }
  | { kind: 'seq'; items: Node[] }
  | { kind: 'alt'; options: Node[] }
  | { kind: 'repeat'; node: Node; min: number; max: number };

const DIGITS = '0123456789'.split('');

function parse(source: string): Node {
  let at = 0;
  const parseAlt = (): Node => {
    const options: Node[] = [parseSeq()];
    while (source[at] === '|') {
      at++;
      options.push(parseSeq());
    }
    return options.length === 1 ? options[0] : { kind: 'alt', options };
  };
  const parseSeq = (): Node => {
    const items: Node[] = [];
    while (at < source.length && source[at] !== '|' && source[at] !== ')') items.push(parseQuantified(parseAtom()));
    return { kind: 'seq', items };
  };
  const parseAtom = (): Node => {
    const c = source[at++];
    if (c === '\\') {
      const e = source[at++];
      if (e !== 'd') throw new Error(`unsupported escape \\${e}`);
      return { kind: 'set', chars: DIGITS };
    }
    if (c === '[') {
      const chars = new Set<string>();
      while (source[at] !== ']') {
        if (source[at] === '\\' && source[at + 1] === 'd') {
          for (const d of DIGITS) chars.add(d);
          at += 2;
        } else if (source[at + 1] === '-' && source[at + 2] !== ']') {
          for (let d = source.charCodeAt(at); d <= source.charCodeAt(at + 2); d++) chars.add(String.fromCharCode(d));
          at += 3;
        } else {
          chars.add(source[at++]);
        }
      }
      at++;
      return { kind: 'set', chars: [...chars] };
    }
    if (c === '(') {
      if (source.startsWith('?:', at)) at += 2;
      const inner = parseAlt();
      at++; // ')'
      return inner;
    }
    if (c >= '0' && c <= '9') return { kind: 'set', chars: [c] };
    throw new Error(`unsupported pattern character ${c}`);
  };
  const parseQuantified = (node: Node): Node => {
    if (source[at] === '?') {
      at++;
      return { kind: 'repeat', node, min: 0, max: 1 };
    }
    const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(at));
    if (!m) return node;
    at += m[0].length;
    const min = Number(m[1]);
    return { kind: 'repeat', node, min, max: m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]) };
  };
  const node = parseAlt();
  if (at !== source.length) throw new Error(`unexpected ${source[at]} at ${at}`);
  return node;
}

/**
 * A set of digit strings of at most K characters, as a list of codes: the string of length n and value v is
 * OFFSET[n] + v. Lists stay short for most parts of a pattern; sets of strings would allocate far more.
 */
const K = 3;
const OFFSET = [0, 1, 11, 111, 1111];
const POW = [1, 10, 100, 1000];

type Prefixes = readonly number[];

function lengthOf(code: number): number {
  return code >= OFFSET[3] ? 3 : code >= OFFSET[2] ? 2 : code >= OFFSET[1] ? 1 : 0;
}

/** Collects codes without duplicates; one scratch array of flags serves every collection, one at a time. */
const marks = new Uint8Array(OFFSET[K + 1]);
class Collector {
  readonly codes: number[] = [];
  add(code: number): void {
    if (marks[code]) return;
    marks[code] = 1;
    this.codes.push(code);
  }
  addAll(codes: Prefixes): void {
    for (const c of codes) this.add(c);
  }
  done(): number[] {
    for (const c of this.codes) marks[c] = 0;
    return this.codes;
  }
}

const memo = new WeakMap<Node, Array<Prefixes | undefined>>();

/** The strings of a language cut to `k` characters: a shorter string is a whole string of the language. */
function prefixes(node: Node, k: number): Prefixes {
  let byK = memo.get(node);
  if (!byK) memo.set(node, (byK = []));
  return (byK[k] ??= computePrefixes(node, k));
}

const EMPTY_STRING: Prefixes = [0];

function computePrefixes(node: Node, k: number): Prefixes {
  if (k === 0) return EMPTY_STRING;
  switch (node.kind) {
    case 'set':
      return node.chars.map((c) => OFFSET[1] + Number(c));
    case 'alt': {
      // Sub-results are computed before collecting: the scratch flags serve one collection at a time.
      const parts = node.options.map((o) => prefixes(o, k));
      const out = new Collector();
      for (const p of parts) out.addAll(p);
      return out.done();
    }
    case 'seq': {
      let acc: Prefixes = EMPTY_STRING;
      for (const item of node.items) acc = concat(acc, item, k);
      return acc;
    }
    case 'repeat': {
      const kept: Prefixes[] = [];
      let acc: Prefixes = EMPTY_STRING;
      for (let r = 0; r <= node.max; r++) {
        if (r >= node.min) kept.push(acc);
        if (r === node.max) break;
        const next = concat(acc, node.node, k);
        // Once every string is k long, more copies change nothing.
        if (next === acc) {
          kept.push(acc);
          break;
        }
        acc = next;
      }
      const out = new Collector();
      for (const p of kept) out.addAll(p);
      return out.done();
    }
  }
}

/** `heads` followed by the strings of `node`, cut to `k`; `heads` itself when all of them are `k` long already. */
function concat(heads: Prefixes, node: Node, k: number): Prefixes {
  if (heads.every((h) => h >= OFFSET[k])) return heads;
  // Every tail list a head needs, before collecting (a head of length n needs only k - n characters of what follows).
  const tails: Array<Prefixes | undefined> = [];
  for (const h of heads) {
    const n = lengthOf(h);
    if (n < k) tails[k - n] ??= prefixes(node, k - n);
  }
  const out = new Collector();
  for (const h of heads) {
    const n = lengthOf(h);
    if (n >= k) {
      out.add(h);
      continue;
    }
    const v = h - OFFSET[n];
    for (const t of tails[k - n]!) {
      const m = lengthOf(t);
      out.add(OFFSET[n + m] + v * POW[m] + (t - OFFSET[m]));
    }
  }
  return out.done();
}

/**
 * The first `k` (at most 3) digits the numbers of `pattern` can start with, as flags by their value: `starts[415]` is
 * 1 when some number of the pattern starts with 415. Numbers shorter than `k` digits are left out.
 */
export function patternStarts(pattern: string, k: number): Uint8Array {
  if (k > K) throw new Error(`prefixes of at most ${K} digits`);
  const starts = new Uint8Array(POW[k]);
  for (const code of prefixes(parse(pattern), k)) if (code >= OFFSET[k]) starts[code - OFFSET[k]] = 1;
  return starts;
}
