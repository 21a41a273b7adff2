import { getCountries, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { countrySpecs } from 'ibantools';
import { describe, expect, it } from 'vitest';
import { isIban } from './iban.js';
import { isPersonalIpv4, isPersonalIpv6 } from './ip-ranges.js';
import { patternStarts } from './phone-pattern-prefixes.js';
import { isNationalNumberSomewhere } from './phone-regions.js';

describe('IP addresses that can point at a person', () => {
  it('are public unicast addresses', () => {
    for (const a of ['81.2.69.142', '185.199.108.153', '100.63.255.1', '172.32.0.1', '1.1.1.2']) expect(isPersonalIpv4(a), a).toBe(true);
    for (const a of ['2a00:1450:4001:830::200e', '2606:4700::6810:84e5', '::ffff:81.2.69.142', '2002:5102:458e::1']) expect(isPersonalIpv6(a), a).toBe(true);
  });

  it('leave out loopback, unspecified, documentation, private, shared, link-local, multicast, reserved, resolvers', () => {
    const v4 = ['127.0.0.1', '127.8.9.1', '0.0.0.0', '0.0.0.255', '192.0.2.1', '198.51.100.7', '203.0.113.42', '10.1.2.3', '172.16.0.1',
      '172.31.255.254', '192.168.1.100', '100.64.0.1', '169.254.169.254', '198.18.0.1', '224.0.0.251', '239.255.255.250', '255.255.255.255',
      '255.255.240.0', '8.8.8.8', '1.1.1.1', '81.2.69.0', '81.2.69.255'];
    for (const a of v4) expect(isPersonalIpv4(a), a).toBe(false);
    const v6 = ['::1', '::', '2001:db8::1', '2001:0db8:85a3::8a2e:370:7334', '3fff::1', 'fd12:3456:789a::1', 'fe80::1ff:fe23:4567:890a', 'ff02::1',
      '::ffff:192.168.1.1', '::ffff:127.0.0.1', '64:ff9b::10.0.0.1', '2002:c000:0204::1', '2001:4860:4860::8888'];
    for (const a of v6) expect(isPersonalIpv6(a), a).toBe(false);
  });
});

describe('IBANs', () => {
  it('know every country ibantools knows, the IBAN registry and the countries outside it', () => {
    expect(Object.values(countrySpecs).filter((s) => s.chars).length).toBeGreaterThanOrEqual(100);
    for (const iban of ['IR601181853067060032300134', 'BR9700360305000010009795493P1', 'TR330006100519786457841326', 'SA0380000000608010167519', 'DE89370400440532013000']) {
      expect(isIban(iban), iban).toBe(true);
    }
  });

  it('need the country length, the checksum and the account format; a wrong national check digit is still an IBAN', () => {
    expect(isIban('DE89370400440532013001')).toBe(false);
    expect(isIban('DE8937040044053201300')).toBe(false);
    expect(isIban('XX89370400440532013000')).toBe(false);
    expect(isIban('BE68539007547034')).toBe(true);
    // Belgium's national check (the last two digits) is wrong here; the IBAN checksum is right.
    expect(isIban('BE41539007547035')).toBe(true);
  });
});

describe('national phone numbers of every region', () => {
  it('agree with libphonenumber-js', () => {
    const regions = getCountries();
    let seed = 22;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let onlyHere = 0;
    let onlyThere = 0;
    const n = 600;
    for (let i = 0; i < n; i++) {
      let digits = i % 3 === 0 ? '0' : '';
      const length = 7 + (i % 6);
      while (digits.length < length) digits += Math.floor(next() * 10);
      const there = regions.some((r) => parsePhoneNumberFromString(digits, r)?.isValid());
      const here = isNationalNumberSomewhere(digits);
      if (here && !there) onlyHere++;
      if (there && !here) onlyThere++;
    }
    // libphonenumber-js also reads a national number that starts with its country's calling code ("49…" in Germany).
    expect(onlyHere).toBe(0);
    expect(onlyThere / n).toBeLessThan(0.02);
  });

  it('look a number up among the patterns that can start with its first digits', () => {
    const starts = patternStarts('(?:2[2-9]|3\\d)\\d{6}|4(?:0[1-3])?\\d{5}', 3);
    const set = [...starts.keys()].filter((k) => starts[k]);
    expect(set).toContain(220);
    expect(set).toContain(399);
    expect(set).toContain(401);
    expect(set).toContain(455);
    expect(set).not.toContain(210);
    expect(set).not.toContain(500);
  });
});
