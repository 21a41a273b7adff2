import { describe, expect, it } from 'vitest';
import { PII_TYPES } from '../../contract/policies.js';
import { redactRequestPii, scanRequestPii } from './scan-request.js';

const EMAIL = 'john.doe@example.com';

function chatRequest(): Record<string, unknown> {
  return {
    model: 'openai/gpt-4o-mini',
    user: 'agent-7',
    messages: [
      { role: 'system', content: 'You are terse. Escalate to ops@example.com.' },
      { role: 'developer', content: [{ type: 'text', text: 'Server 81.2.69.142 is ours.' }] },
      {
        role: 'user',
        name: 'jane@example.com',
        content: [
          { type: 'text', text: 'My card is 4111 1111 1111 1111.' },
          { type: 'image_url', image_url: { url: 'https://img.example.com/a.png?owner=jane@example.com' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'lookup', arguments: JSON.stringify({ note: 'call\n+44 20 7946 0958', password: 'Tr0ub4dor&3' }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: `Found ${EMAIL}` },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot share 123-45-6789.' }] },
    ],
  };
}

describe('scanRequestPii', () => {
  it('finds PII in every text location of a chat request, in contract order', () => {
    expect(scanRequestPii(chatRequest(), PII_TYPES)).toEqual(['email', 'phone', 'credit_card', 'ssn', 'ip_address', 'secret']);
  });

  it('reads image URLs, which the provider receives, but not the data of an inline image', () => {
    const body = { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `https://x.io/?u=${EMAIL}` } }] }] };
    expect(scanRequestPii(body, PII_TYPES)).toEqual(['email']);
    const png = Buffer.from(`\x89PNG ${'4155552671 '.repeat(20)}`).toString('base64');
    const inline = { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }] };
    expect(scanRequestPii(inline, PII_TYPES)).toEqual([]);
    // A data URL whose payload is not base64 is text the upstream receives: read.
    for (const url of [`data:image/png;base64,${EMAIL}`, `data:image/svg+xml,<text>${EMAIL}</text>`, `data:image/png;name=${EMAIL};base64,${png}`]) {
      expect(scanRequestPii({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] }, PII_TYPES)).toEqual(['email']);
    }
  });

  it('scans message names, the end-user id and metadata values, which are forwarded upstream', () => {
    expect(scanRequestPii({ messages: [{ role: 'user', name: EMAIL, content: 'hi' }] }, PII_TYPES)).toEqual(['email']);
    expect(scanRequestPii({ user: EMAIL, messages: [] }, PII_TYPES)).toEqual(['email']);
    expect(scanRequestPii({ metadata: { customer: '123-45-6789' }, messages: [] }, PII_TYPES)).toEqual(['ssn']);
    const red = redactRequestPii({ user: EMAIL, metadata: { c: EMAIL }, messages: [{ role: 'user', name: EMAIL, content: 'x' }] }, PII_TYPES);
    expect(JSON.stringify(red.body)).not.toContain(EMAIL);
  });

  it('reads tool-call arguments decoded, with the key as label', () => {
    const args = JSON.stringify({ config: { db_password: 'S3cr3t!Pass2024' }, text: 'line one\n4155552671' });
    const body = { messages: [{ role: 'assistant', tool_calls: [{ function: { name: 'f', arguments: args } }] }] };
    expect(scanRequestPii(body, PII_TYPES)).toEqual(['phone', 'secret']);
  });

  it('scans arguments that are not JSON as raw text', () => {
    const body = { messages: [{ role: 'assistant', function_call: { name: 'f', arguments: `{"to": "${EMAIL}"` } }] };
    expect(scanRequestPii(body, PII_TYPES)).toEqual(['email']);
  });

  it('scans embeddings input as a string or an array of strings, not token ids', () => {
    expect(scanRequestPii({ model: 'm', input: `hello ${EMAIL}` }, PII_TYPES)).toEqual(['email']);
    expect(scanRequestPii({ model: 'm', input: ['fine', 'call (415) 555-2671'] }, PII_TYPES)).toEqual(['phone']);
    expect(scanRequestPii({ model: 'm', input: [4155552671, 1234] }, PII_TYPES)).toEqual([]);
    expect(scanRequestPii({ model: 'm', input: [[4155552671, 1234]] }, PII_TYPES)).toEqual([]);
  });

  it('scans predicted output', () => {
    expect(scanRequestPii({ messages: [], prediction: { type: 'content', content: `reply to ${EMAIL}` } }, PII_TYPES)).toEqual(['email']);
  });

  it('honours the requested types and tolerates odd shapes', () => {
    expect(scanRequestPii(chatRequest(), ['ssn'])).toEqual(['ssn']);
    expect(scanRequestPii(chatRequest(), [])).toEqual([]);
    // Parsed JSON of any shape, whatever the declared type says.
    for (const odd of [null, undefined, 42, 'text', [], { messages: 'x' }, { messages: [null, 1, { content: 5 }] }, { input: {} }]) {
      expect(scanRequestPii(odd as Record<string, unknown>, PII_TYPES)).toEqual([]);
    }
  });
});

describe('redactRequestPii', () => {
  it('redacts every text location on a copy and leaves the input untouched', () => {
    const body = chatRequest();
    const before = structuredClone(body);
    const { body: out, types } = redactRequestPii(body, PII_TYPES);
    expect(body).toEqual(before);
    expect(types).toEqual(['email', 'phone', 'credit_card', 'ssn', 'ip_address', 'secret']);

    const messages = (out as { messages: Array<Record<string, any>> }).messages;
    expect(messages[0].content).toBe('You are terse. Escalate to [REDACTED:EMAIL].');
    expect(messages[1].content[0].text).toBe('Server [REDACTED:IP_ADDRESS] is ours.');
    expect(messages[2].content[0].text).toBe('My card is [REDACTED:CREDIT_CARD].');
    expect(messages[2].name).toBe('[REDACTED:EMAIL]');
    // An image URL goes to the provider, which fetches it: it is read and redacted as any text.
    expect(messages[2].content[1].image_url.url).toBe('https://img.example.com/a.png?owner=[REDACTED:EMAIL]');
    expect(JSON.parse(messages[3].tool_calls[0].function.arguments)).toEqual({
      note: 'call\n[REDACTED:PHONE]',
      password: '[REDACTED:SECRET]',
    });
    expect(messages[4].content).toBe('Found [REDACTED:EMAIL]');
    expect(messages[5].content[0].refusal).toBe('I cannot share [REDACTED:SSN].');
    expect(JSON.stringify(out)).not.toMatch(/ops@example|81\.2\.69\.142|4111 1111|7946 0958|Tr0ub4dor|123-45-6789|john\.doe/);
  });

  it('redacts embeddings inputs and keeps token ids', () => {
    const body = { model: 'm', input: ['a 81.2.69.142', 'b', 7] };
    expect(redactRequestPii(body, PII_TYPES)).toEqual({ body: { model: 'm', input: ['a [REDACTED:IP_ADDRESS]', 'b', 7] }, types: ['ip_address'] });
    expect(body.input[0]).toBe('a 81.2.69.142');
  });

  it('keeps arguments byte for byte when they hold no PII', () => {
    const args = '{ "city" : "Berlin" }';
    const body = { messages: [{ role: 'assistant', tool_calls: [{ function: { name: 'f', arguments: args } }] }] };
    const { body: out } = redactRequestPii(body, PII_TYPES);
    expect(out.messages[0].tool_calls[0].function.arguments).toBe(args);
  });

  it('returns an equal copy when nothing is found', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hello' }] };
    const result = redactRequestPii(body, PII_TYPES);
    expect(result).toEqual({ body, types: [] });
    expect(result.body).not.toBe(body);
  });
});
