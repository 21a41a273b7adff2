import { describe, expect, it } from 'vitest';
import { PII_TYPES } from '../../contract/policies.js';
import { detectPii } from './detect-pii.js';
import { ALLOW_NOTHING, allowedByAll, compileAllow } from './pii-allow.js';
import { redactPii } from './redact-pii.js';

describe('rules.pii_allow', () => {
  it('allows literal values and globs, whatever the letter case', () => {
    const allow = compileAllow(['Support@Acme.io', '*@example.com', 'ops-??@corp.test', '127.0.0.1']);
    for (const v of ['support@acme.io', 'SUPPORT@ACME.IO', 'jane@example.com', 'a.b+c@EXAMPLE.com', 'ops-eu@corp.test']) expect(allow.allows(v)).toBe(true);
    for (const v of ['jane@example.org', 'jane@example.com.evil.io', 'ops-emea@corp.test', 'support@acme.iox']) expect(allow.allows(v)).toBe(false);
  });

  it('compares numbers without their spaces and punctuation', () => {
    const allow = compileAllow(['+14155552671', 'DE89370400440532013000']);
    expect(allow.allows('+1 (415) 555-2671')).toBe(true);
    expect(allow.allows('DE89 3704 0044 0532 0130 00')).toBe(true);
    expect(allow.allows('+1 415 555 2672')).toBe(false);
  });

  it('escapes everything but * and ?', () => {
    const allow = compileAllow(['a.b@c.io', '(x)|y@z.io']);
    expect(allow.allows('axb@c.io')).toBe(false);
    expect(allow.allows('(x)|y@z.io')).toBe(true);
    expect(allow.allows('y@z.io')).toBe(false);
  });

  it('compiles a list once, in any order', () => {
    expect(compileAllow(['b', 'a'])).toBe(compileAllow(['A', 'b']));
    expect(compileAllow([])).toBe(ALLOW_NOTHING);
  });

  it('drops allowed matches and keeps the rest', () => {
    const text = 'Mail noc@acme.io or jane@gmail.com, from 81.2.69.142 and 81.2.69.143.';
    const allow = compileAllow(['*@acme.io', '81.2.69.142']);
    const found = detectPii(text, PII_TYPES, allow).map((m) => text.slice(m.start, m.end));
    expect(found).toEqual(['jane@gmail.com', '81.2.69.143']);
    expect(redactPii(text, PII_TYPES, allow).text).toBe('Mail noc@acme.io or [REDACTED:EMAIL], from 81.2.69.142 and [REDACTED:IP_ADDRESS].');
  });

  it('of several lists, allows only what every one allows', () => {
    const a = compileAllow(['*@example.com', '127.0.0.1']);
    const b = compileAllow(['*@example.com']);
    const both = allowedByAll([a, b]);
    expect(both.allows('x@example.com')).toBe(true);
    expect(both.allows('127.0.0.1')).toBe(false);
    expect(allowedByAll([a, ALLOW_NOTHING])).toBe(ALLOW_NOTHING);
    expect(allowedByAll([a, a])).toBe(a);
  });
});
