import { describe, expect, it } from 'vitest';
import { PII_TYPES } from '../../contract/policies.js';
import { PII_TABLE } from './__fixtures__/pii-table.js';
import { detectPii } from './detect-pii.js';
import { redactPii } from './redact-pii.js';

describe('redactPii', () => {
  it('replaces each match with its marker', () => {
    const text = 'Mail john.doe@example.com or call +44 20 7946 0958; card 4111 1111 1111 1111.';
    expect(redactPii(text, PII_TYPES)).toEqual({
      text: 'Mail [REDACTED:EMAIL] or call [REDACTED:PHONE]; card [REDACTED:CREDIT_CARD].',
      types: ['email', 'phone', 'credit_card'],
    });
  });

  it('upper-cases every type in its marker', () => {
    const text = 'ip 81.2.69.142, iban DE89370400440532013000, ssn 123-45-6789, password=Tr0ub4dor&3';
    expect(redactPii(text, PII_TYPES).text).toBe(
      'ip [REDACTED:IP_ADDRESS], iban [REDACTED:IBAN], ssn [REDACTED:SSN], password=[REDACTED:SECRET]',
    );
  });

  it('touches only the requested types', () => {
    const text = 'john.doe@example.com, 81.2.69.142';
    expect(redactPii(text, ['ip_address'])).toEqual({ text: 'john.doe@example.com, [REDACTED:IP_ADDRESS]', types: ['ip_address'] });
    expect(redactPii(text, [])).toEqual({ text, types: [] });
  });

  it('leaves a text without PII as it is', () => {
    const text = 'Release 1.2.3 ships on 2024-01-15.';
    expect(redactPii(text, PII_TYPES)).toEqual({ text, types: [] });
  });

  it('removes every matched text of the table from its redaction', () => {
    for (const row of PII_TABLE) {
      const matched = detectPii(row.text, PII_TYPES).map((m) => row.text.slice(m.start, m.end));
      const { text, types } = redactPii(row.text, PII_TYPES);
      for (const piece of matched) expect(text).not.toContain(piece);
      expect([...types].sort()).toEqual([...new Set(row.types)].sort());
    }
  });

  it('redacts a neighbour that the first match hid', () => {
    expect(redactPii('123-45-6789+44 20 7946 0958', PII_TYPES)).toEqual({ text: '[REDACTED:SSN][REDACTED:PHONE]', types: ['phone', 'ssn'] });
  });

  it('never reads its own marker as a credential', () => {
    const { text } = redactPii('https://-----BEGIN RSA PRIVATE KEY-----john@example.com', PII_TYPES);
    expect(detectPii(text, PII_TYPES)).toEqual([]);
  });

  it('redacts a whole PEM key, headers included', () => {
    const pem = ['-----BEGIN OPENSSH PRIVATE', ' KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE', ' KEY-----'].join('');
    expect(redactPii(`key:\n${pem}\nthanks`, ['secret']).text).toBe('key:\n[REDACTED:SECRET]\nthanks');
  });
});
