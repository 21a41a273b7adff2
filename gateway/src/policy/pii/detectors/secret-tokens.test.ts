import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { PiiMatch } from '../pii-match.js';
import { findAwsSecretKeys } from './secret-tokens.js';

/** The AWS secret key scan as a regular expression: maximal base64 runs, then the same checks on each. */
function byRegex(text: string): PiiMatch[] {
  const out: PiiMatch[] = [];
  for (const m of text.matchAll(/[A-Za-z0-9/+]{40,}/g)) {
    const token = m[0];
    if (token.length !== 40 || text[m.index + 40] === '=') continue;
    if (!/[a-z]/.test(token) || !/[A-Z]/.test(token) || !/[0-9/+]/.test(token)) continue;
    if (!/aws|secret|AKIA|ASIA/i.test(text.slice(Math.max(0, m.index - 200), m.index))) continue;
    out.push({ type: 'secret', start: m.index, end: m.index + 40 });
  }
  return out;
}

const KEY = ['wJalrXUtnFEMI', '/K7MDENG/', 'bPxRfiCYEXAMPLEKEY'].join('');

describe('AWS secret access keys', () => {
  test('a 40-character run near a label is found; 39, 41, a padded one or a hex digest are not', () => {
    const found = (text: string) => {
      const out: PiiMatch[] = [];
      findAwsSecretKeys(text, out);
      return out.map((m) => text.slice(m.start, m.end));
    };
    expect(found(`aws_secret_access_key = ${KEY}`)).toEqual([KEY]);
    expect(found(`secret: ${KEY}.`)).toEqual([KEY]);
    expect(found(`secret: ${KEY.slice(1)}`)).toEqual([]);
    expect(found(`secret: ${KEY}A`)).toEqual([]);
    expect(found(`secret: ${KEY}=`)).toEqual([]);
    expect(found(`secret: ${'da39a3ee5e6b4b0d3255bfef95601890afd80709'}`)).toEqual([]);
    expect(found(`no label here: ${KEY}`)).toEqual([]);
  });

  test('the character scan finds what the regular expression finds, on texts of base64 runs, labels and other characters', () => {
    const piece = fc.oneof(
      fc.constantFrom(KEY, 'AWS', 'secret', 'AKIA', '=', ' ', '-', '\n', 'é', '😀', '+', '/'),
      fc.stringMatching(/^[A-Za-z0-9/+]{30,45}$/),
      fc.string({ maxLength: 8 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const text = pieces.join('');
        const out: PiiMatch[] = [];
        findAwsSecretKeys(text, out);
        expect(out).toEqual(byRegex(text));
      }),
      { numRuns: 1500 },
    );
  });
});
