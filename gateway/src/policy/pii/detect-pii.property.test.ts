import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PII_TYPES } from '../../contract/policies.js';
import { detectPii } from './detect-pii.js';
import { redactPii } from './redact-pii.js';

// Fragments that reach every detector's slow path, glued together in random order.
const FRAGMENTS = [
  '0', '1', '4', '9', ' ', '-', '.', ':', '::', '/', '+', '(', ')', '@', '=', '"', "'", '\\', '\n', '#', 'x', 'a', 'Z',
  '０', '－', 'é', '日', '\ud800', '\udc00', 'eyJ', 'sk-', 'AKIA', 'ghp_', 'xoxb-', 'AIza', 'Bearer ', 'DE89', 'GB82',
  'password=', 'api_key: ', 'ssn ', 'https://', '-----BEGIN RSA PRIVATE KEY-----', '-----END RSA PRIVATE KEY-----',
  'john@example.com', '4111 1111 1111 1111', '+44 20 7946 0958', '123-45-6789', '81.2.69.142', '10.0.0.1', 'fe80::1', '2a00:1450::1', '۰۹۱۲', '2024-01-15',
];
const piiish = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 60 }).map((parts) => parts.join(''));
const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 300 }), piiish);
const anyTypes = fc.subarray([...PII_TYPES]);

describe('detectPii properties', () => {
  it('never throws; matches are in bounds, sorted and non-overlapping', () => {
    fc.assert(
      fc.property(anyText, anyTypes, (text, types) => {
        const matches = detectPii(text, types);
        let lastEnd = 0;
        for (const m of matches) {
          expect(types).toContain(m.type);
          expect(m.start).toBeGreaterThanOrEqual(lastEnd);
          expect(m.end).toBeGreaterThan(m.start);
          expect(m.end).toBeLessThanOrEqual(text.length);
          lastEnd = m.end;
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('finds nothing more in a redacted text', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const once = redactPii(text, PII_TYPES).text;
        expect(detectPii(once, PII_TYPES)).toEqual([]);
      }),
      { numRuns: 3000 },
    );
  });

  it('returns on 1 MB of adversarial text', () => {
    const size = 1 << 20;
    const fill = (unit: string) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
    const units = ['1 ', '0 ', '(0', 'a@', 'a.b@c', '1.1.1.1.', '::1 ', 'eyJa', 'password=', '-----BEGIN RSA PRIVATE KEY-----', 'DE89 ', '4111 ', '123-45-', 'aB3/', '1-', '０'];
    for (const unit of units) {
      expect(Array.isArray(detectPii(fill(unit), PII_TYPES))).toBe(true);
    }
  }, 120_000);
});
