// The places the policy views once skipped, one request each, with the default pii_scope unless a case says otherwise:
// each was forwarded before the views read what they had no rule for.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Dialect, send } from '../test-support/dialects.js';
import { type DialectGateway, startDialectGateway } from '../test-support/dialect-gateway.js';

type Json = Record<string, unknown>;

const EMAIL = 'jane.doe@example.com';

let harness: DialectGateway;
const keys: Record<string, string> = {};

beforeAll(async () => {
  harness = await startDialectGateway({ prices: { input: 1, output: 1 } });
  const { admin } = harness;
  await admin.tenant('acme');
  const policies: Record<string, Json> = {
    block: { rules: { pii: 'block' } },
    'block-user-assistant': { rules: { pii: 'block', pii_scope: ['user', 'assistant'] } },
    cap: { rules: { max_cost_per_request: 0.05 } },
    redact: { rules: { pii: 'redact' } },
  };
  for (const [id, fields] of Object.entries(policies)) {
    await admin.policy(`ff-${id}`, { tenant_id: 'acme', ...fields });
    keys[id] = (await admin.agent('acme', `ff-${id}`, `ff-${id}`)).api_key as string;
  }
}, 60_000);
afterAll(async () => {
  await harness?.close();
});

const route = (name: string): Dialect => harness.route(name);

async function expectRefused(routeName: string, key: string, body: Json, status: number, code: string): Promise<void> {
  const d = route(routeName);
  const before = d.upstream.count();
  const res = await send(harness.gw.url, d, { model: d.model, ...body }, { key });
  expect(res.status, res.text).toBe(status);
  expect(d.error(res.json)?.code, res.text).toBe(code);
  expect(d.upstream.count(), 'nothing reaches the upstream').toBe(before);
}

const user = (content: unknown) => ({ role: 'user', content });

describe('Responses input items the view had no rule for carry user input', () => {
  const items: Array<[string, Json]> = [
    ['shell_call_output', { type: 'shell_call_output', call_id: 'call_1', output: [{ stdout: `mail ${EMAIL}`, stderr: '', outcome: { type: 'exit', exit_code: 0 } }] }],
    ['local_shell_call_output', { type: 'local_shell_call_output', id: 'lsh_1', output: `mail ${EMAIL}` }],
    ['apply_patch_call_output', { type: 'apply_patch_call_output', call_id: 'call_1', status: 'completed', output: `patched for ${EMAIL}` }],
    ['mcp_call', { type: 'mcp_call', id: 'mcp_1', server_label: 'crm', name: 'find', arguments: '{}', output: `found ${EMAIL}` }],
    ['computer_call_output', { type: 'computer_call_output', call_id: 'call_1', output: { type: 'computer_screenshot', image_url: `https://shots.example.org/?owner=${EMAIL}` } }],
    ['an item type from tomorrow', { type: 'hologram_call_output', call_id: 'call_1', payload: { deep: [{ text: EMAIL }] } }],
  ];
  test.each(items)('%s', async (_name, item) => {
    await expectRefused('responses native', keys.block!, { max_output_tokens: 64, input: [user('hi'), item] }, 403, 'pii_detected');
  });
});

describe('Messages blocks the view had no rule for', () => {
  const blocks: Array<[string, Json]> = [
    ['a search_result block', { type: 'search_result', source: 'https://example.org', title: 'r', content: [{ type: 'text', text: `contact ${EMAIL}` }] }],
    ['a document with a content source', { type: 'document', source: { type: 'content', content: [{ type: 'text', text: `contact ${EMAIL}` }] } }],
    ["a document's title", { type: 'document', title: `from ${EMAIL}`, source: { type: 'text', media_type: 'text/plain', data: 'hello' } }],
  ];
  test.each(blocks)('%s', async (_name, block) => {
    await expectRefused('messages native', keys.block!, { max_tokens: 64, messages: [user([block, { type: 'text', text: 'summarise' }])] }, 403, 'pii_detected');
  });
});

describe('case variants of defined members are a 400 naming the key', () => {
  const cases: Array<[string, string, Json, string]> = [
    ['chat completions', 'Content beside content', { max_tokens: 64, messages: [{ role: 'user', content: 'hi', Content: EMAIL }] }, 'messages.0.Content'],
    ['responses native', 'Model', { Model: 'gpt-4.1', max_output_tokens: 64, input: 'hi' }, 'Model'],
    ['responses native', 'Max_Output_Tokens', { Max_Output_Tokens: 100_000, input: 'hi' }, 'Max_Output_Tokens'],
    ['messages native', 'Model', { Model: 'claude-opus-4-1', max_tokens: 64, messages: [user('hi')] }, 'Model'],
    ['messages native', 'the Kelvin sign (Go folds it to k)', { max_tokens: 64, messages: [user('hi')], top_\u212a: 5 }, 'top_\u212a'],
  ];
  test.each(cases)('%s: %s', async (routeName, _name, body, param) => {
    const d = route(routeName);
    const res = await send(harness.gw.url, d, { model: d.model, ...body }, { key: keys.cap! });
    expect(res.status, res.text).toBe(400);
    expect(d.error(res.json)?.code).toBe('validation_failed');
    if (d.errorShape === 'openai') expect(res.json.error.param).toBe(param);
    expect(res.text).toContain(JSON.stringify(param).slice(1, -1));
  });

  test('a tool schema holding both Name and name, and tool arguments with any keys, still pass', async () => {
    const d = route('messages native');
    const schema = { type: 'object', properties: { Name: { type: 'string' }, name: { type: 'string' } } };
    const res = await send(
      harness.gw.url,
      d,
      {
        model: d.model,
        max_tokens: 64,
        tools: [{ name: 'save', input_schema: schema }],
        messages: [user('save it'), { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'save', input: { Name: 'A', name: 'b', Content: 'c' } }] }, user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }])],
      },
      { key: keys.cap! },
    );
    expect(res.status, res.text).toBe(200);
  });
});

describe('the prompt bound', () => {
  test('a long text nested deeper than 64 levels in a tool_use input counts against the cap', async () => {
    let input: unknown = 'x '.repeat(200_000);
    for (let i = 0; i < 126; i++) input = { [`k${i}`]: input };
    await expectRefused(
      'messages native',
      keys.cap!,
      { max_tokens: 64, messages: [user('go'), { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input }] }, user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }])] },
      403,
      'cost_cap_exceeded',
    );
  });

  test.each([
    ['messages native', { max_tokens: 64, messages: [user([{ type: 'document', source: { type: 'url', url: 'https://example.org/big.pdf' } }, { type: 'text', text: 'read' }])] }],
    ['messages native', { max_tokens: 64, messages: [user([{ type: 'document', source: { type: 'file', file_id: 'file_1' } }, { type: 'text', text: 'read' }])] }],
    ['responses native', { max_output_tokens: 64, input: [user([{ type: 'input_file', file_url: 'https://example.org/big.pdf' }, { type: 'input_text', text: 'read' }])] }],
    ['responses native', { max_output_tokens: 64, input: [user([{ type: 'input_file', file_id: 'file-1' }, { type: 'input_text', text: 'read' }])] }],
  ] as Array<[string, Json]>)('%s: a file by URL or id is priced at the context window, not the bytes of its URL', async (routeName, body) => {
    await expectRefused(routeName, keys.cap!, body, 403, 'cost_cap_exceeded');
  });
});

describe('arguments read as the model reads them (pii_scope user and assistant)', () => {
  test.each([
    ['a repeated key', `{"q":"${EMAIL}","q":"x"}`],
    ['a __proto__ key', `{"__proto__":{"q":"${EMAIL}"}}`],
    ['a key', `{"${EMAIL}":1}`],
    ['a string 100 levels deep', `${'{"a":'.repeat(100)}"${EMAIL}"${'}'.repeat(100)}`],
  ])('%s', async (_name, args) => {
    await expectRefused(
      'chat completions',
      keys['block-user-assistant']!,
      {
        max_tokens: 64,
        messages: [user('look it up'), { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: args } }] }, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }],
      },
      403,
      'pii_detected',
    );
  });
});

test('native Responses refuses background: true, naming the field', async () => {
  await expectRefused('responses native', keys.cap!, { max_output_tokens: 64, input: 'hi', background: true }, 400, 'validation_failed');
});

describe('a body that repeats a key is forwarded as the checks read it, never as received', () => {
  test.each([
    ['messages native', (m: string) => `{"model":"${m}","max_tokens":64,"messages":[{"role":"user","content":"mail ${EMAIL}","content":"hi"}]`],
    ['responses native', (m: string) => `{"model":"${m}","max_output_tokens":64,"input":[{"role":"user","content":"mail ${EMAIL}","content":"hi"}]`],
    ['chat completions', (m: string) => `{"model":"${m}","max_tokens":64,"messages":[{"role":"user","content":"mail ${EMAIL}","content":"hi"}]`],
  ] as Array<[string, (model: string) => string]>)('%s', async (routeName, body) => {
    const d = route(routeName);
    // Past the size from which a body is kept with its bytes and forwarded as received.
    const text = `${body(d.model)},"temperature":0${' '.repeat(5_000)}}`;
    const res = await fetch(`${harness.gw.url}${d.path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...d.headers({ key: keys.block! }) }, body: text });
    expect(res.status, await res.text()).toBe(200);
    expect(d.upstream.lastRaw()).not.toContain(EMAIL);
  });
});

test('count_tokens: a case variant of a defined member is a 400 too', async () => {
  const res = await fetch(`${harness.gw.url}/v1/messages/count_tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': keys.cap! },
    body: JSON.stringify({ model: route('messages native').model, messages: [{ role: 'user', content: 'hi', Content: EMAIL }] }),
  });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
});

// (Chat Completions refuses an unknown top-level field with a 400 before any policy.)
describe('the names of members the views read one by one are read too', () => {
  test.each([
    ['messages native', 'block', { max_tokens: 64, messages: [user('hi')], [EMAIL]: 1 }],
    ['responses native', 'block', { max_output_tokens: 64, input: 'hi', [EMAIL]: 1 }],
    ['responses native', 'block-user-assistant', { max_output_tokens: 64, input: [user('run it'), { type: 'shell_call', call_id: 'call_1', action: { commands: ['ls'] }, [EMAIL]: 1 }] }],
  ] as Array<[string, string, Json]>)('%s (%s)', async (routeName, key, body) => {
    await expectRefused(routeName, keys[key]!, body, 403, 'pii_detected');
  });
});

describe("a dialect's binary shapes are skipped only where the dialect puts them, and only as base64", () => {
  const toolTurn = (input: unknown) => [user('go'), { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input }] }, user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }])];
  test.each([
    ['an image block inside a tool input', { type: 'image', data: `contact ${EMAIL}` }],
    ['a resource blob inside a tool input', { blob: `contact ${EMAIL}` }],
    ['a data URL inside a tool input', { url: `data:image/png,contact ${EMAIL}` }],
    ['a signed thinking block inside a tool input', { type: 'thinking', thinking: `mail ${EMAIL}`, signature: 'EqQBCkYIBxgCKkA' }],
  ] as Array<[string, Json]>)('%s (pii_scope user and assistant)', async (_name, inner) => {
    await expectRefused('messages native', keys['block-user-assistant']!, { max_tokens: 64, messages: toolTurn({ q: [inner] }) }, 403, 'pii_detected');
  });

  test.each([
    ['an unsigned thinking block in a user turn', user([{ type: 'thinking', thinking: `mail ${EMAIL}` }, { type: 'text', text: 'hi' }])],
    ['a thinking block whose signature is not base64', user([{ type: 'thinking', thinking: `mail ${EMAIL}`, signature: 'sig!' }, { type: 'text', text: 'hi' }])],
    ['an image whose data is not base64', user([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: `contact ${EMAIL}` } }, { type: 'text', text: 'hi' }])],
    ['a lookalike block in a tool result', user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok', extra: { type: 'audio', data: `contact ${EMAIL}` } }])],
  ] as Array<[string, Json]>)('%s', async (_name, message) => {
    await expectRefused('messages native', keys.block!, { max_tokens: 64, messages: [message] }, 403, 'pii_detected');
  });

  test('a data URL with text in it, in a Responses tool output', async () => {
    const output = [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: `data:image/png;base64,${EMAIL}` }];
    await expectRefused('responses native', keys.block!, { max_output_tokens: 64, input: [user('hi'), { type: 'function_call_output', call_id: 'call_1', output }] }, 403, 'pii_detected');
  });

  test('a real image is still skipped, and priced as an image', async () => {
    const d = route('messages native');
    const png = Buffer.from(`\x89PNG ${'4155552671 '.repeat(50)}`).toString('base64');
    const body = { model: d.model, max_tokens: 64, messages: [user([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }, { type: 'text', text: 'what is it?' }])] };
    const res = await send(harness.gw.url, d, body, { key: keys.block! });
    expect(res.status, res.text).toBe(200);
  });

  test('an image-shaped object in a tool input counts its bytes against the cap', async () => {
    await expectRefused('messages native', keys.cap!, { max_tokens: 64, messages: toolTurn({ type: 'image', data: 'spend '.repeat(80_000) }) }, 403, 'cost_cap_exceeded');
    await expectRefused('messages native', keys.cap!, { max_tokens: 64, messages: toolTurn({ shot: { type: 'image_url', image_url: { url: `https://x.io/${'a'.repeat(480_000)}` } } }) }, 403, 'cost_cap_exceeded');
  });
});

describe('a text file sent inline is read as the upstream decodes it', () => {
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  const note = `Meeting notes\ncontact ${EMAIL} about the contract`;
  const cases: Array<[string, string, Json]> = [
    ['a chat file part, base64 data URL', 'chat completions', { max_tokens: 64, messages: [user([{ type: 'text', text: 'summarise' }, { type: 'file', file: { filename: 'notes.txt', file_data: `data:text/plain;base64,${b64(note)}` } }])] }],
    ['a Responses input_file, base64 data URL', 'responses native', { max_output_tokens: 64, input: [user([{ type: 'input_text', text: 'summarise' }, { type: 'input_file', filename: 'notes.md', file_data: `data:text/markdown;base64,${b64(note)}` }])] }],
    ['a Responses input_file, percent-encoded data URL', 'responses native', { max_output_tokens: 64, input: [user([{ type: 'input_file', filename: 'n.txt', file_data: `data:,${encodeURIComponent(note)}` }])] }],
    ['a JSON file in a Responses tool output', 'responses native', { max_output_tokens: 64, input: [user('hi'), { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_file', file_data: `data:application/json;base64,${b64(JSON.stringify({ owner: EMAIL }))}` }] }] }],
    ['a Messages document with a base64 text source', 'messages native', { max_tokens: 64, messages: [user([{ type: 'document', source: { type: 'base64', media_type: 'text/plain', data: b64(note) } }, { type: 'text', text: 'summarise' }])] }],
  ];
  test.each(cases)('%s', async (_name, routeName, body) => {
    await expectRefused(routeName, keys.block!, body, 403, 'pii_detected');
  });

  test('under redact, the upstream gets the file encoded as sent, without the address', async () => {
    const d = route('chat completions');
    const body = { model: d.model, max_tokens: 64, messages: [user([{ type: 'text', text: 'summarise' }, { type: 'file', file: { filename: 'notes.txt', file_data: `data:text/plain;base64,${b64(note)}` } }])] };
    const res = await send(harness.gw.url, d, body, { key: keys.redact! });
    expect(res.status, res.text).toBe(200);
    const fileData = d.upstream.last().messages[0].content[1].file.file_data as string;
    expect(fileData).toMatch(/^data:text\/plain;base64,/);
    const decoded = Buffer.from(fileData.slice(fileData.indexOf(',') + 1), 'base64').toString('utf8');
    expect(decoded).toContain('Meeting notes');
    expect(decoded).not.toContain(EMAIL);
    expect(d.upstream.lastRaw()).not.toContain(b64(EMAIL).slice(0, 12));
  });

  test('a PDF or an image sent inline is still skipped as media', async () => {
    const pdf = b64(`%PDF-1.7 ${'4155552671 '.repeat(40)}`);
    const d = route('chat completions');
    const body = { model: d.model, max_tokens: 64, messages: [user([{ type: 'text', text: 'what is it?' }, { type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${pdf}` } }])] };
    expect((await send(harness.gw.url, d, body, { key: keys.block! })).status).toBe(200);
    const m = route('messages native');
    const doc = { model: m.model, max_tokens: 64, messages: [user([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }, { type: 'text', text: 'what is it?' }])] };
    const res = await send(harness.gw.url, m, doc, { key: keys.block! });
    expect(res.status, res.text).toBe(200);
  });
});

describe('PII written with invisible characters or in full-width forms is read as the model reads it', () => {
  const hidden: Array<[string, string]> = [
    ['zero-width spaces', 'jane.doe\u200B@exam\u200Bple.com'],
    ['a full-width at sign', 'jane.doe\uFF20example.com'],
  ];
  test.each(hidden)('%s: refused under block, redacted whole under redact', async (_name, address) => {
    await expectRefused('chat completions', keys.block!, { max_tokens: 64, messages: [user(`write to ${address} today`)] }, 403, 'pii_detected');
    const d = route('chat completions');
    const res = await send(harness.gw.url, d, { model: d.model, max_tokens: 64, messages: [user(`write to ${address} today`)] }, { key: keys.redact! });
    expect(res.status, res.text).toBe(200);
    expect(d.upstream.last().messages[0].content).toBe('write to [REDACTED:EMAIL] today');
  });
});
