// Recorded Claude Code and Codex requests through the PII rules: an agent's own instructions, tool schemas, file
// contents and command output pass `pii: block`; a real e-mail address or card number in the user's message does not.
import { readdirSync, readFileSync } from 'node:fs';
import { fakerEN_US } from '@faker-js/faker';
import { describe, expect, it } from 'vitest';
import { mergePolicy, PII_PARTS, type Policy, type RulesInput } from '../../../contract/policies.js';
import { messagesPolicyView } from '../../../data-plane/dialects/messages/messages-policy-view.js';
import { responsesPolicyView } from '../../../data-plane/dialects/responses/responses-policy-view.js';
import { applyPiiRules } from '../../pii-rules.js';
import type { PolicyView } from '../../policy-view.js';
import { redactionMarker } from '../redact-pii.js';

type Json = Record<string, unknown>;

const DIALECTS: ReadonlyArray<{ dir: URL; pattern: RegExp; view: PolicyView }> = [
  { dir: new URL('../../../data-plane/dialects/messages/__fixtures__/', import.meta.url), pattern: /^claude-code.*-request\.json$/, view: messagesPolicyView },
  { dir: new URL('../../../data-plane/dialects/responses/__fixtures__/', import.meta.url), pattern: /^codex-.*request\.json$/, view: responsesPolicyView },
];

const FIXTURES = DIALECTS.flatMap(({ dir, pattern, view }) =>
  readdirSync(dir)
    .filter((f) => pattern.test(f))
    .sort()
    .map((name) => ({ name, view, body: JSON.parse(readFileSync(new URL(name, dir), 'utf8')) as Json })),
);

function policy(rules: RulesInput): Policy {
  return { id: 'pii-eval', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', ...mergePolicy(null, { rules }) };
}

const DEFAULT_BLOCK = policy({ pii: 'block' });
const BLOCK_EVERYWHERE = policy({ pii: 'block', pii_scope: [...PII_PARTS] });
const REDACT_EVERYWHERE = policy({ pii: 'redact', pii_scope: [...PII_PARTS] });

/** The last text the user typed: a text block of a user turn (tool results are left alone), as a holder and key. */
function lastUserText(body: Json): { holder: Json; key: string } {
  const turns = (Array.isArray(body.messages) ? body.messages : body.input) as Json[];
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i];
    if (turn.role !== 'user' || (turn.type !== undefined && turn.type !== 'message')) continue;
    if (typeof turn.content === 'string') return { holder: turn, key: 'content' };
    const parts = (turn.content as Json[]).filter((p) => p.type === 'text' || p.type === 'input_text');
    if (parts.length > 0) return { holder: parts[parts.length - 1], key: 'text' };
  }
  throw new Error('no user text in the request');
}

/** The request with `sentence` added to the user's last text, and the same with `value` replaced by its marker. */
function withUserSentence(body: Json, sentence: string, value: string, marker: string): { sent: Json; redacted: Json } {
  const sent = structuredClone(body);
  const at = lastUserText(sent);
  at.holder[at.key] = `${at.holder[at.key] as string}\n\n${sentence}`;
  const redacted = structuredClone(sent);
  const r = lastUserText(redacted);
  r.holder[r.key] = (r.holder[r.key] as string).replace(value, marker);
  return { sent, redacted };
}

fakerEN_US.seed(22);
const EMAIL = fakerEN_US.internet.email();
const CARD = fakerEN_US.finance.creditCardNumber('visa');

describe.each(FIXTURES)('$name', ({ view, body }) => {
  const walk = view.visitTexts.bind(view);

  it('passes pii: block with the default scope and with every part in scope, and redaction changes nothing', () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(5);
    for (const p of [DEFAULT_BLOCK, BLOCK_EVERYWHERE]) {
      const out = applyPiiRules([p], body, walk);
      expect(out.blocked?.message).toBeUndefined();
      expect(out.found).toEqual([]);
    }
    expect(applyPiiRules([REDACT_EVERYWHERE], body, walk).body).toEqual(body);
  });

  it.each([
    ['an e-mail address', `Please send the summary to ${EMAIL} when you are done.`, EMAIL, 'email'],
    ['a card number', `Use my card ${CARD} for the subscription.`, CARD, 'credit_card'],
  ] as const)('is blocked with %s in the user message, and redacted under redact', (_what, sentence, value, type) => {
    const { sent, redacted } = withUserSentence(body, sentence, value, redactionMarker(type));
    for (const p of [DEFAULT_BLOCK, BLOCK_EVERYWHERE]) {
      const out = applyPiiRules([p], sent, walk);
      expect(out.found).toEqual([type]);
      expect(out.blocked?.code).toBe('pii_detected');
    }
    const out = applyPiiRules([REDACT_EVERYWHERE], sent, walk);
    expect(out.blocked).toBeUndefined();
    expect(out.body).toEqual(redacted);
  });
});
