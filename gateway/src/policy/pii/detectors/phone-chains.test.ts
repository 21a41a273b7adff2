import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { type DigitGroup, forEachDigitChain } from './phone-chains.js';

/**
 * The chains as the first version split them, with a regular expression and a group object per digit run: the
 * reference the faster scan must agree with, chain for chain and group for group.
 */
function referenceChains(text: string): DigitGroup[][] {
  const digit = (c: number) => (c >= 48 && c <= 57) || (c >= 0xff10 && c <= 0xff19) || (c >= 0x0660 && c <= 0x0669) || (c >= 0x06f0 && c <= 0x06f9);
  const zero = (d: string) => (d >= '\uff10' ? 0xff10 : d >= '\u06f0' ? 0x06f0 : 0x0660);
  const ascii = (run: string) => run.replace(/[\uff10-\uff19\u0660-\u0669\u06f0-\u06f9]/g, (d) => String(d.charCodeAt(0) - zero(d)));
  const link = /^(?:[ \u00a0\u202f\u2009\u3000\-./()\uff08\uff09\u2010-\u2015\u2212\uff0d\u30fc]){1,3}$/;
  const linkGap = (gap: string) => link.test(gap) && (gap.match(/[ \u00a0\u202f\u2009\u3000]/g)?.length ?? 0) < 2;
  const chains: DigitGroup[][] = [];
  let chain: DigitGroup[] = [];
  for (const m of text.matchAll(/[0-9\uff10-\uff19\u0660-\u0669\u06f0-\u06f9]+/g)) {
    const start = m.index;
    const end = start + m[0].length;
    let leadStart = start;
    let international = false;
    for (let k = 0; k < 2 && leadStart > 0; k++) {
      const c = text[leadStart - 1];
      if (c === '+' || c === '\uff0b') international = true;
      else if (!(c === '(' || c === '\uff08') || !(text[end] === ')' || text[end] === '\uff09') || m[0].length > 5) break;
      leadStart--;
    }
    const prev = chain.at(-1);
    const gap = prev && start - prev.end <= 3 ? text.slice(prev.end, start) : '';
    if (prev && (international || !linkGap(gap))) {
      chains.push(chain);
      chain = [];
    }
    chain.push({ start, end, digits: ascii(m[0]), leadStart, international, gapBefore: chain.length > 0 ? gap : '' });
  }
  if (chain.length > 0) chains.push(chain);
  expect(chains.flat().every((g) => [...text.slice(g.start, g.end)].every((c) => digit(c.charCodeAt(0))))).toBe(true);
  return chains;
}

const piece = fc.oneof(
  fc.constantFrom('+1 (415) 555-2671', '(+62) 21 555 0199', '030 1234567', '٠١٢٣-٤٥٦', '۰۱۲۳ ۴۵۶۷', '０３-１２３４', '＋', '（', '）', '\u2013', '\u3000', '\u00a0', ' ', '  ', '-', '.', '/', '(', ')', '+', 'x', 'e9', '\n'),
  fc.stringMatching(/^[0-9a-f-]{1,12}$/),
  fc.stringMatching(/^[0-9 ()+./-]{1,12}$/),
);

describe('digit chains', () => {
  test('split as the reference splits them, and every group of two digits or more is a neighbouring number', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const text = pieces.join('');
        const chains: DigitGroup[][] = [];
        const numbers: number[] = [];
        forEachDigitChain(text, (groups) => chains.push(groups), () => true, numbers);
        const reference = referenceChains(text);
        expect(chains).toEqual(reference);
        expect(numbers).toEqual(reference.flat().filter((g) => g.digits.length >= 2).map((g) => g.start));
      }),
      { numRuns: 1500 },
    );
  });

  test('a chain left out by `wanted` is not made, and still counts among the numbers', () => {
    const chains: DigitGroup[][] = [];
    const numbers: number[] = [];
    forEachDigitChain('id a1b2c3 then 415-555-2671', (groups) => chains.push(groups), (lead) => lead > 10, numbers);
    expect(chains.map((c) => c.map((g) => g.digits))).toEqual([['415', '555', '2671']]);
    expect(numbers).toEqual([15, 19, 23]);
  });
});
