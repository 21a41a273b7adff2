import { describe, expect, it } from 'vitest';
import { mergePolicy, type Policy, type RulesInput } from '../contract/policies.js';
import { applyPiiRules } from './pii-rules.js';

function policy(id: string, rules: RulesInput): Policy {
  return { id, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', ...mergePolicy(null, { rules }) };
}

const chat = (user: string, system = 'You are terse.') => ({ model: 'm', messages: [{ role: 'system', content: system }, { role: 'user', content: user }] });

describe('applyPiiRules', () => {
  it('reads user messages and tool results by default, and the other parts only when the scope names them', () => {
    const p = policy('p', { pii: 'block' });
    expect(applyPiiRules([p], chat('hi', 'Escalate to jane@gmail.com'), undefined).blocked).toBeUndefined();
    expect(applyPiiRules([p], chat('mail jane@gmail.com')).blocked?.code).toBe('pii_detected');
    const everywhere = policy('p', { pii: 'block', pii_scope: ['user', 'system'] });
    expect(applyPiiRules([everywhere], chat('hi', 'Escalate to jane@gmail.com')).found).toEqual(['email']);
  });

  it('never treats what rules.pii_allow lists as PII, under block and redact', () => {
    const body = chat('write to noc@acme.io and jane@gmail.com');
    const block = policy('b', { pii: 'block', pii_allow: ['*@acme.io', '*@gmail.com'] });
    expect(applyPiiRules([block], body)).toEqual({ body, found: [] });
    const redact = policy('r', { pii: 'redact', pii_allow: ['*@acme.io'] });
    const out = applyPiiRules([redact], body);
    expect(out.found).toEqual(['email']);
    expect((out.body.messages as Array<{ content: string }>)[1].content).toBe('write to noc@acme.io and [REDACTED:EMAIL]');
  });

  it('keeps each policy to its own allow-list: what one allows, another may still block or redact', () => {
    const body = chat('write to noc@acme.io');
    const lenient = policy('lenient', { pii: 'block', pii_allow: ['*@acme.io'] });
    const strict = policy('strict', { pii: 'block' });
    expect(applyPiiRules([lenient, strict], body).blocked?.message).toContain('policy strict');
    const redacting = policy('redacting', { pii: 'redact' });
    const out = applyPiiRules([lenient, redacting], body);
    expect(out.blocked).toBeUndefined();
    expect((out.body.messages as Array<{ content: string }>)[1].content).toBe('write to [REDACTED:EMAIL]');
  });

  it('sees no one in a no-reply sender, loopback and documentation addresses', () => {
    const p = policy('p', { pii: 'block', pii_scope: ['user', 'assistant', 'system', 'tools'] });
    const body = chat('curl 127.0.0.1:8080 from 192.0.2.10 and [::1]; ping 2001:db8::1', 'Co-Authored-By: Claude <noreply@anthropic.com>');
    expect(applyPiiRules([p], body)).toEqual({ body, found: [] });
  });
});
