import { describe, expect, it } from 'vitest';
import { ibanChecksumValid, luhnValid } from './checksums.js';
import { isIpv6 } from './ip-address.js';
import { isCardNumber } from './payment-card.js';
import { isSecretValue } from './secret-assignments.js';
import { isSsn } from './ssn.js';

describe('checksums and validators', () => {
  it('Luhn', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(luhnValid('')).toBe(false);
  });

  it('IBAN mod 97', () => {
    expect(ibanChecksumValid('DE89370400440532013000')).toBe(true);
    expect(ibanChecksumValid('DE89370400440532013001')).toBe(false);
  });

  it('card needs a known issuer range and length', () => {
    expect(isCardNumber('378282246310005')).toBe(true);
    // Luhn-valid, but 9 is no issuer prefix.
    expect(isCardNumber('9111111111111110')).toBe(false);
    expect(isCardNumber('41111111111111111')).toBe(false);
  });

  it('SSN excludes never-issued ranges', () => {
    expect(isSsn('123', '45', '6789')).toBe(true);
    for (const [a, g, s] of [['000', '45', '6789'], ['666', '45', '6789'], ['912', '45', '6789'], ['123', '00', '6789'], ['123', '45', '0000']]) {
      expect(isSsn(a, g, s)).toBe(false);
    }
  });

  it('IPv6 full and compressed forms, not code or times', () => {
    for (const ok of ['2001:db8::1', 'fe80::1ff:fe23:4567:890a', '::ffff:192.0.2.1', '1:2:3:4:5:6:7:8', '2001:db8::']) expect(isIpv6(ok)).toBe(true);
    for (const bad of ['::1', '::', 'a::b', '12:30:45', '1::2::3', '1:2:3:4:5:6:7:8:9', 'dead::beef', '12345::1']) expect(isIpv6(bad)).toBe(false);
  });

  it('secret values need entropy and are not placeholders or code', () => {
    expect(isSecretValue('Tr0ub4dor&3')).toBe(true);
    for (const v of ['********', 'YOUR_API_KEY', '${API_KEY}', 'config.apiKey', 'getenv("KEY")', 'changeme123', 'short1', 'aaaaaaaaaaaa', '[REDACTED:SECRET]']) {
      expect(isSecretValue(v)).toBe(false);
    }
  });
});
