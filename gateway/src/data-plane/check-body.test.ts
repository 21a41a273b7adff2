import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MessagesRequest, MessagesRequestParts } from '../contract/messages-request.js';
import { ResponsesRequest, ResponsesRequestParts } from '../contract/responses-request.js';
import { parseReceivedJson } from '../json/parse-received.js';
import { isKeptPart } from '../json/part-values.js';
import { type SchemaParts, checkBody, parseBody } from './parse-body.js';
import type { z } from 'zod';

const outcome = (f: () => unknown) => {
  try {
    f();
    return { ok: true };
  } catch (e) {
    const err = e as { code?: string; message: string; param?: string | null };
    return { code: err.code, message: err.message, param: err.param };
  }
};

// Values of every kind, and the near misses of each field: a field may be absent, of the wrong type or out of range.
const anything = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 3 }), fc.constant([]), fc.constant({}));
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 3 });

const block = fc.oneof(
  fc.record({ type: fc.constantFrom('text', 'tool_result', 'image', ''), text: maybe(fc.oneof(fc.string({ maxLength: 8 }), anything)) }, { requiredKeys: [] }),
  anything,
);
const message = fc.oneof(
  { weight: 4, arbitrary: fc.record({ role: fc.constantFrom('user', 'assistant', 'system', 'tool'), content: fc.oneof(fc.string({ maxLength: 8 }), fc.array(block, { maxLength: 3 })) }, { requiredKeys: ['role'] }) },
  { weight: 1, arbitrary: anything },
);
const tool = fc.oneof(
  { weight: 4, arbitrary: fc.record({ name: fc.oneof(fc.constantFrom('Bash', 'Read', ''), fc.integer()), type: maybe(fc.constantFrom('custom', 'bash_20250124')), input_schema: maybe(fc.constant({ type: 'object' })) }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: anything },
);
const messagesBody = fc.record(
  {
    model: fc.oneof(fc.constant('claude-sonnet-4-5'), anything),
    messages: fc.oneof({ weight: 5, arbitrary: fc.array(message, { maxLength: 4 }) }, { weight: 1, arbitrary: anything }),
    max_tokens: fc.oneof(fc.constant(1024), fc.integer({ min: -1, max: 2 }), anything),
    tools: fc.oneof({ weight: 4, arbitrary: fc.array(tool, { maxLength: 3 }) }, { weight: 1, arbitrary: anything }),
    system: fc.oneof(fc.string({ maxLength: 8 }), fc.array(fc.record({ type: fc.constantFrom('text', 'image'), text: fc.string({ maxLength: 4 }) }), { maxLength: 2 }), anything),
    stream: fc.oneof(fc.boolean(), anything),
  },
  { requiredKeys: [] },
);

const item = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: maybe(fc.constantFrom('message', 'function_call', 'function_call_output', '')), role: maybe(fc.constantFrom('user', 'assistant', 'developer', 'tool')), content: maybe(fc.string({ maxLength: 8 })), call_id: maybe(fc.string({ maxLength: 4 })) }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: anything },
);
const responsesTool = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constantFrom('function', 'web_search', 'Bad Type', ''), name: maybe(fc.string({ maxLength: 4 })) }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: anything },
);
const responsesBody = fc.record(
  {
    model: fc.oneof(fc.constant('gpt-5'), anything),
    input: fc.oneof({ weight: 5, arbitrary: fc.array(item, { maxLength: 4 }) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }, { weight: 1, arbitrary: anything }),
    instructions: maybe(fc.oneof(fc.string({ maxLength: 8 }), anything)),
    tools: fc.oneof({ weight: 4, arbitrary: fc.array(responsesTool, { maxLength: 3 }) }, { weight: 1, arbitrary: anything }),
    stream: maybe(fc.oneof(fc.boolean(), anything)),
  },
  { requiredKeys: [] },
);

/** The body as a client's bytes large enough to be parsed by parts: its arrays' elements are then kept parts. */
function received(body: Record<string, unknown>): unknown {
  return parseReceivedJson(Buffer.from(JSON.stringify({ ...body, padding: 'x'.repeat(5_000) })));
}

function sameAsWhole(schema: z.ZodType, parts: SchemaParts, body: Record<string, unknown>): void {
  const whole = outcome(() => parseBody(schema, body));
  expect(outcome(() => checkBody(schema, parts, body))).toEqual(whole);
  // As received, twice: the second time each element's check is looked up.
  const padded = outcome(() => parseBody(schema, { ...body, padding: 'x'.repeat(5_000) }));
  for (let round = 0; round < 3; round++) {
    const value = received(body);
    expect(outcome(() => checkBody(schema, parts, value))).toEqual(padded);
  }
}

describe('checkBody', () => {
  it('passes and refuses Messages bodies as MessagesRequest does, with the same error', () => {
    fc.assert(fc.property(messagesBody, (body) => sameAsWhole(MessagesRequest, MessagesRequestParts, body)), { numRuns: 1500 });
  });

  it('passes and refuses Responses bodies as ResponsesRequest does, with the same error', () => {
    fc.assert(fc.property(responsesBody, (body) => sameAsWhole(ResponsesRequest, ResponsesRequestParts, body)), { numRuns: 1500 });
  });

  it('checks an element sent again once, and one that changed again', () => {
    const body = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'Bash' }] };
    received(body);
    const first = received(body) as { messages: unknown[] };
    expect(isKeptPart(first.messages[0])).toBe(true);
    expect(outcome(() => checkBody(MessagesRequest, MessagesRequestParts, first))).toEqual({ ok: true });
    const changed = received({ ...body, messages: [{ role: 'user', content: 7 }] });
    expect(outcome(() => checkBody(MessagesRequest, MessagesRequestParts, changed))).toMatchObject({ code: 'validation_failed', param: 'messages.0.content' });
  });
});
