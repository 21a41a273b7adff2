// Recall on values no one here wrote: @faker-js/faker's emails, phone numbers, cards, IBANs, IP addresses and
// credentials of 36 locales, each set in a sentence of its locale. The figures are in the README.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { describe, expect, it } from 'vitest';
import { PII_TYPES, type PiiType } from '../../../contract/policies.js';
import { detectPii } from '../detect-pii.js';
import { isPersonalIpv4, isPersonalIpv6 } from '../detectors/ip-ranges.js';
import { fakerSamples, LOCALES, type Sample } from './__fixtures__/faker-sentences.js';

/** At least this share of each type is found; phones: of those libphonenumber-js calls valid in the locale's region. */
const FLOOR: Readonly<Partial<Record<PiiType, number>>> = { email: 0.99, phone: 0.98, credit_card: 0.99, iban: 0.99, ip_address: 0.99, secret: 0.99 };

/** A sample counts when it is PII by the README's definition: a valid phone number, an address that can point at a person. */
function counts(s: Sample): boolean {
  if (s.type === 'phone') return parsePhoneNumberFromString(s.value, s.region)?.isValid() === true;
  if (s.type === 'ip_address') return s.value.includes(':') ? isPersonalIpv6(s.value) : isPersonalIpv4(s.value);
  return true;
}

/** Found: matches of the sample's type cover every letter and digit of the value (a phone's extension aside). */
function found(s: Sample): boolean {
  const core = s.type === 'phone' ? s.value.replace(/(?:\s*(?:x|ext\.?)|,?\s*poste)\s*\d+$/i, '') : s.value;
  const matches = detectPii(s.text, PII_TYPES).filter((m) => m.type === s.type);
  for (let k = s.start; k < s.start + core.length; k++) {
    if (!/[\p{L}\p{N}]/u.test(s.text[k])) continue;
    if (!matches.some((m) => m.start <= k && k < m.end)) return false;
  }
  return true;
}

describe('recall on faker values in sentences of 36 locales', () => {
  const samples = fakerSamples();
  const byType = new Map<PiiType, { total: number; counted: number; found: number; misses: Sample[] }>();
  const phoneByLocale = new Map<string, { counted: number; found: number }>();
  for (const s of samples) {
    let t = byType.get(s.type);
    if (!t) byType.set(s.type, (t = { total: 0, counted: 0, found: 0, misses: [] }));
    t.total++;
    if (!counts(s)) continue;
    t.counted++;
    const ok = found(s);
    if (ok) t.found++;
    else if (t.misses.length < 5) t.misses.push(s);
    if (s.type === 'phone') {
      let l = phoneByLocale.get(s.locale);
      if (!l) phoneByLocale.set(s.locale, (l = { counted: 0, found: 0 }));
      l.counted++;
      if (ok) l.found++;
    }
  }

  it('covers at least 15 locales, es and fa among them', () => {
    const ids = LOCALES.map((l) => l.id);
    expect(ids.length).toBeGreaterThanOrEqual(15);
    expect(ids).toEqual(expect.arrayContaining(['es', 'fa']));
  });

  it.each(Object.entries(FLOOR) as Array<[PiiType, number]>)('%s: recall at least %s', (type, floor) => {
    const t = byType.get(type)!;
    const recall = t.found / t.counted;
    console.log(
      `${type}: ${t.found} of ${t.counted} found (${(recall * 100).toFixed(2)}%)` +
        (t.counted < t.total ? `; ${t.total - t.counted} of ${t.total} generated are not counted (${type === 'phone' ? 'not valid in their region' : 'addresses that point at no one'})` : '') +
        (t.misses.length ? `\n  missed: ${t.misses.map((m) => JSON.stringify(m.text)).join('\n  missed: ')}` : ''),
    );
    expect(t.counted).toBeGreaterThan(5_000);
    expect(recall).toBeGreaterThanOrEqual(floor);
  });

  it('finds valid phone numbers in every locale', () => {
    const rows = [...phoneByLocale].map(([locale, l]) => `${locale} ${((l.found / l.counted) * 100).toFixed(1)}% of ${l.counted}`);
    console.log(`phone recall by locale: ${rows.join(', ')}`);
    for (const [, l] of phoneByLocale) expect(l.found / l.counted).toBeGreaterThanOrEqual(0.95);
  });
}, 180_000);
