// False positives on real technical prose no one here wrote: the paragraphs and code blocks of the READMEs that the
// installed npm packages ship. The figures are in the README.
import { describe, expect, it } from 'vitest';
import { PII_TYPES, type PiiType } from '../../../contract/policies.js';
import { detectPii } from '../detect-pii.js';
import { type ProseBlock, readmeBlocks } from './__fixtures__/readme-paragraphs.js';

/**
 * READMEs of libraries about the formats themselves: their text is phone numbers, IBANs and addresses by design (a
 * detector that let "+1 213 373 4253" through would be broken), so they are not negatives.
 */
const ABOUT_THE_FORMATS = ['libphonenumber-js', 'ibantools', 'ipaddr.js', 'ip-address'];

/**
 * E-mail addresses in READMEs are real addresses (authors' and maintainers' contact lines, sample addresses in code):
 * found, not false positives. They are counted apart.
 */
const NOT_FALSE_POSITIVES: readonly PiiType[] = ['email'];

describe('false positives on the READMEs of installed packages', () => {
  const blocks = readmeBlocks();
  const negatives = blocks.filter((b) => !ABOUT_THE_FORMATS.includes(b.source.replace(/^.*node_modules\//, '')));
  const flagged: Array<{ block: ProseBlock; types: Set<PiiType>; pieces: string[] }> = [];
  for (const block of negatives) {
    const matches = detectPii(block.text, PII_TYPES);
    if (matches.length > 0) {
      flagged.push({ block, types: new Set(matches.map((m) => m.type)), pieces: matches.map((m) => `${m.type}: ${block.text.slice(m.start, m.end)}`) });
    }
  }
  const falsePositives = flagged.filter((f) => [...f.types].some((t) => !NOT_FALSE_POSITIVES.includes(t)));

  it('reads thousands of paragraphs', () => {
    console.log(`${blocks.length} distinct blocks (${blocks.filter((b) => b.code).length} of them code) from the READMEs under node_modules; ${negatives.length} outside the READMEs of ${ABOUT_THE_FORMATS.join(', ')}`);
    expect(negatives.length).toBeGreaterThan(2_000);
  });

  it('flags at most 0.2% of paragraphs with anything but an e-mail address', () => {
    const byType = new Map<PiiType, number>();
    for (const f of flagged) for (const t of f.types) byType.set(t, (byType.get(t) ?? 0) + 1);
    const share = (n: number) => `${((n / negatives.length) * 100).toFixed(2)}%`;
    console.log(
      `flagged: ${flagged.length} paragraphs (${share(flagged.length)}), by type ${JSON.stringify(Object.fromEntries(byType))}; ` +
        `false positives (a type other than e-mail): ${falsePositives.length} (${share(falsePositives.length)})\n  ` +
        falsePositives.map((f) => `${f.block.source}: ${f.pieces.join(', ')}`).join('\n  '),
    );
    expect(falsePositives.length / negatives.length).toBeLessThanOrEqual(0.002);
    // E-mail addresses included, a ceiling that catches a detector gone loose.
    expect(flagged.length / negatives.length).toBeLessThanOrEqual(0.005);
  });
}, 180_000);
