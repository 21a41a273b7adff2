import { describe, expect, test } from 'vitest';
import { formatUsd } from '../../../console/src/format.js';
import { usd } from './format-usage.js';

const CASES: [number, string][] = [
  [0, '$0.00'],
  [0.000112, '$0.000112'],
  [0.0000123456, '$0.00001235'],
  [0.0234567, '$0.02346'],
  [0.5, '$0.50'],
  [0.1234, '$0.1234'],
  [1.2345, '$1.23'],
  [250, '$250.00'],
  [12345.678, '$12,345.68'],
  [-0.25, '-$0.25'],
];

describe('money', () => {
  test.each(CASES)('%s is %s in the CLI', (v, text) => {
    expect(usd(v)).toBe(text);
  });

  test('the console writes every amount as the CLI does', () => {
    for (const [v] of CASES) expect(formatUsd(v), String(v)).toBe(usd(v));
    for (let e = -9; e <= 6; e++) for (const m of [1, 1.5, 2.345, 9.9999]) expect(formatUsd(m * 10 ** e)).toBe(usd(m * 10 ** e));
  });
});
