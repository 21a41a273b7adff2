// The fail-closed rule on /mcp: a PII value anywhere in a tool call's arguments (any depth, as a value or a key) is
// blocked or redacted before the upstream server gets it, and anywhere in a result (any content block type, known or
// not, structuredContent, resource contents) is redacted before the client gets it.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { mergePolicy, type Policy, type RulesInput } from '../contract/policies.js';
import { applyPiiRules } from './pii-rules.js';
import { toolCallArguments, toolCallBody, toolCallView } from './tool-call-view.js';
import { redactToolResult } from './tool-result-pii.js';

const EMAIL = 'jane.doe@example.com';
const RUNS = 200;

function policy(rules: RulesInput): Policy {
  return { id: 'p', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', ...mergePolicy(null, { rules }) };
}

/** The value nested 1-500 levels deep in objects and arrays, as a value or as a key. */
const nested = fc.tuple(fc.integer({ min: 1, max: 500 }), fc.boolean()).map(([depth, asKey]) => {
  let v: unknown = asKey ? { [EMAIL]: 1 } : `write to ${EMAIL}`;
  for (let i = 1; i < depth; i++) v = i % 3 === 0 ? [v] : { [`level_${i}`]: v };
  return v;
});

/** A result content block of a known or unknown type with the value somewhere in it. */
const resultBlock = fc.tuple(fc.constantFrom('text', 'resource', 'resource_link', 'image', 'audio', 'x_future'), nested).map(([type, value]) => {
  switch (type) {
    case 'text':
      return { type, text: 'ok', _meta: { note: value } };
    case 'resource':
      return { type, resource: { uri: 'file:///a', mimeType: 'application/json', text: JSON.stringify(value) } };
    case 'resource_link':
      return { type, uri: 'file:///a', name: 'a', description: value };
    case 'image':
    case 'audio':
      return { type, data: 'AAAA', mimeType: `${type}/png`, annotations: { audience: [value] } };
    default:
      return { type, payload: value };
  }
});

describe('/mcp tool calls and results', () => {
  test('arguments: blocked under block, gone from what is forwarded under redact', () => {
    const block = policy({ pii: 'block' });
    const redact = policy({ pii: 'redact' });
    fc.assert(
      fc.property(nested, (value) => {
        const body = toolCallBody('crm/find', { query: value });
        expect(applyPiiRules([block], body, toolCallView.visitTexts).blocked?.code).toBe('pii_detected');
        const out = applyPiiRules([redact], body, toolCallView.visitTexts);
        expect(out.found).toEqual(['email']);
        expect(JSON.stringify(toolCallArguments(out.body))).not.toContain(EMAIL);
      }),
      { numRuns: RUNS },
    );
  });

  test('results: redacted in every block type, structuredContent and resource contents', () => {
    const blocking = policy({ pii: 'block' });
    fc.assert(
      fc.property(fc.array(resultBlock, { minLength: 1, maxLength: 3 }), nested, fc.boolean(), (content, structured, asContents) => {
        const result = asContents ? { contents: content } : { content, structuredContent: { value: structured } };
        const out = redactToolResult([blocking], result);
        expect(out.found).toEqual(['email']);
        expect(JSON.stringify(out.result)).not.toContain(EMAIL);
      }),
      { numRuns: RUNS },
    );
  });

  test('results: a text resource sent as a base64 blob is read decoded and redacted in its encoding; a binary one is left as is', () => {
    const b64 = (t: string) => Buffer.from(t, 'utf8').toString('base64');
    const png = b64('\x89PNG 4155552671');
    const result = {
      contents: [
        { uri: 'file:///notes.txt', mimeType: 'text/plain', blob: b64(`owner ${EMAIL}`) },
        { uri: 'file:///a.png', mimeType: 'image/png', blob: png },
      ],
    };
    const out = redactToolResult([policy({ pii: 'block' })], result);
    expect(out.found).toEqual(['email']);
    const [text, image] = (out.result as typeof result).contents;
    expect(Buffer.from(text!.blob, 'base64').toString('utf8')).toBe('owner [REDACTED:EMAIL]');
    expect(image!.blob).toBe(png);
  });
});
