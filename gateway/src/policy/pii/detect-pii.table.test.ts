import { afterAll, describe, expect, it } from 'vitest';
import { PII_TYPES, type PiiType } from '../../contract/policies.js';
import { PII_TABLE } from './__fixtures__/pii-table.js';
import { detectPii } from './detect-pii.js';

const tally = { tp: 0, fp: 0, fn: 0 };

function typesFound(text: string): PiiType[] {
  const seen = new Set(detectPii(text, PII_TYPES).map((m) => m.type));
  return PII_TYPES.filter((t) => seen.has(t));
}

describe('detectPii over the PII table', () => {
  it.each(PII_TABLE.map((row, i) => [i, row.text, row.types] as const))('row %i: %j', (_i, text, expected) => {
    const found = typesFound(text);
    for (const t of found) (expected.includes(t) ? tally.tp++ : tally.fp++);
    for (const t of expected) if (!found.includes(t)) tally.fn++;
    expect(found).toEqual(PII_TYPES.filter((t) => expected.includes(t)));
  });

  afterAll(() => {
    const precision = tally.tp + tally.fp === 0 ? 1 : tally.tp / (tally.tp + tally.fp);
    const recall = tally.tp + tally.fn === 0 ? 1 : tally.tp / (tally.tp + tally.fn);
    console.log(`PII table: ${PII_TABLE.length} texts, precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}`);
  });
});
