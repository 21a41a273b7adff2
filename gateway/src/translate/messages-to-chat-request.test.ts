import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../contract/errors.js';
import type { MessagesRequest } from './messages-api.js';
import { DROPPED_MESSAGES_HINTS, type MessagesToChatOptions, messagesToChatRequest } from './messages-to-chat-request.js';

const OPTS: MessagesToChatOptions = { model: 'gpt-x', maxTokensField: 'max_completion_tokens', reasons: true };
const PNG = 'iVBORw0KGgo=';

function req(extra: Record<string, unknown> = {}): MessagesRequest {
  return { model: 'claude-sonnet-4', max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }], ...extra } as MessagesRequest;
}

function convert(extra: Record<string, unknown> = {}, opts: Partial<MessagesToChatOptions> = {}) {
  return messagesToChatRequest(req(extra), { ...OPTS, ...opts });
}

/** The AgentgwError a conversion throws, for asserting its code and param. */
function refusal(extra: Record<string, unknown>, opts: Partial<MessagesToChatOptions> = {}): AgentgwError {
  try {
    convert(extra, opts);
  } catch (e) {
    if (e instanceof AgentgwError) return e;
    throw e;
  }
  throw new Error('expected a 400');
}

function expect400(extra: Record<string, unknown>, param: string, message?: RegExp, opts: Partial<MessagesToChatOptions> = {}): void {
  const e = refusal(extra, opts);
  expect(e.code).toBe('validation_failed');
  expect(e.status).toBe(400);
  expect(e.param).toBe(param);
  if (message) expect(e.message).toMatch(message);
}

describe('messagesToChatRequest: top level', () => {
  it('carries model, max_tokens into the named field, sampling and stop sequences', () => {
    const out = convert({ temperature: 0.3, top_p: 0.9, stop_sequences: ['END', 'STOP'] });
    expect(out).toEqual({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'Hi' }],
      max_completion_tokens: 1024,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END', 'STOP'],
    });
    const legacy = convert({}, { maxTokensField: 'max_tokens' });
    expect(legacy.max_tokens).toBe(1024);
    expect(legacy.max_completion_tokens).toBeUndefined();
  });

  it('asks for usage in the stream', () => {
    expect(convert({ stream: true })).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(convert({ stream: false }).stream).toBeUndefined();
  });

  it('leaves out an empty stop_sequences', () => {
    expect(convert({ stop_sequences: [] }).stop).toBeUndefined();
  });

  it('drops pure hints without a trace in the chat request', () => {
    const out = convert({
      metadata: { user_id: 'u1' },
      service_tier: 'auto',
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      cache_control: { type: 'ephemeral' },
      speed: 'fast',
      diagnostics: { previous_message_id: null },
      container: null,
      top_k: null,
    });
    expect(out).toEqual({ model: 'gpt-x', messages: [{ role: 'user', content: 'Hi' }], max_completion_tokens: 1024 });
  });

  it('refuses an unknown field, naming it', () => {
    expect400({ frequency_penalty: 1 }, 'frequency_penalty', /^Unknown field "frequency_penalty"/);
  });

  it.each([
    ['top_k', 40],
    ['container', 'container_abc'],
    ['mcp_servers', [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }]],
    ['inference_geo', 'us'],
  ])('refuses %s, which the target cannot take', (field, value) => {
    expect400({ [field]: value }, field, /cannot be carried over to the target provider/);
  });

  it('refuses more than 4 stop sequences and non-string ones', () => {
    expect400({ stop_sequences: ['a', 'b', 'c', 'd', 'e'] }, 'stop_sequences', /at most 4/);
    expect400({ stop_sequences: [1] }, 'stop_sequences');
  });

  it('refuses a missing or wrong max_tokens, temperature or top_p', () => {
    expect400({ max_tokens: undefined }, 'max_tokens');
    expect400({ max_tokens: 1.5 }, 'max_tokens');
    expect400({ temperature: '0.5' }, 'temperature');
    expect400({ top_p: 'x' }, 'top_p');
  });

  it('lists every dropped hint with a reason', () => {
    const fields = DROPPED_MESSAGES_HINTS.map((h) => h.field);
    for (const f of ['cache_control', 'metadata', 'service_tier', 'context_management', 'thinking']) expect(fields).toContain(f);
    expect(fields.some((f) => f.includes('thinking, redacted_thinking'))).toBe(true);
    for (const h of DROPPED_MESSAGES_HINTS) expect(h.why.length).toBeGreaterThan(10);
  });
});

describe('messagesToChatRequest: system', () => {
  it('makes one leading system message from a string', () => {
    expect(convert({ system: 'Be brief.' }).messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
  });

  it('joins text blocks with a blank line, dropping cache_control', () => {
    const out = convert({ system: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B', cache_control: { type: 'ephemeral' } }] });
    expect(out.messages[0]).toEqual({ role: 'system', content: 'A\n\nB' });
  });

  it('leaves out an empty system', () => {
    expect(convert({ system: '' }).messages[0].role).toBe('user');
    expect(convert({ system: [] }).messages[0].role).toBe('user');
  });

  it('refuses a non-text system block', () => {
    expect400({ system: [{ type: 'image', source: { type: 'url', url: 'x' } }] }, 'system.0');
    expect400({ system: 3 }, 'system');
  });
});

describe('messagesToChatRequest: user content', () => {
  const user = (content: unknown) => convert({ messages: [{ role: 'user', content }] }).messages;

  it('turns one text block into a string and several blocks into parts', () => {
    expect(user([{ type: 'text', text: 'Hello', cache_control: { type: 'ephemeral' } }])).toEqual([{ role: 'user', content: 'Hello' }]);
    expect(user([{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }])).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }] },
    ]);
  });

  it('turns base64 and url images into image_url parts', () => {
    expect(user([
      { type: 'text', text: 'What is this?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
    ])).toEqual([{
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
      ],
    }]);
  });

  it('turns a base64 PDF into a file part, with its title as the filename', () => {
    expect(user([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }])).toEqual([
      { role: 'user', content: [{ type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }] },
    ]);
    const titled = user([{ type: 'document', title: 'report.pdf', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }]);
    expect(titled[0]).toMatchObject({ content: [{ type: 'file', file: { filename: 'report.pdf' } }] });
  });

  it('turns a text document into text, with its title and context, and drops citations', () => {
    expect(user([{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'The body.' } }, { type: 'text', text: 'Sum up.' }])).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'The body.' }, { type: 'text', text: 'Sum up.' }] },
    ]);
    const titled = user([{
      type: 'document', title: 'Notes', context: 'From the meeting', citations: { enabled: true },
      source: { type: 'text', media_type: 'text/plain', data: 'The body.' },
    }]);
    expect(titled).toEqual([{ role: 'user', content: 'Notes\n\nFrom the meeting\n\nThe body.' }]);
  });

  it('turns a content document into its parts', () => {
    expect(user([{ type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'one' }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] } }])).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
    ]);
    expect(user([{ type: 'document', source: { type: 'content', content: 'plain' } }])).toEqual([{ role: 'user', content: 'plain' }]);
  });

  it('puts tool results first, as tool messages, then the rest of the user turn', () => {
    expect(user([
      { type: 'text', text: 'Here you go.' },
      { type: 'tool_result', tool_use_id: 'call_1', content: '42' },
      { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: 'line 1' }, { type: 'text', text: 'line 2' }] },
    ])).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: '42' },
      { role: 'tool', tool_call_id: 'call_2', content: 'line 1\n\nline 2' },
      { role: 'user', content: 'Here you go.' },
    ]);
  });

  it('keeps a failed tool result, marked as an error, and an empty one', () => {
    expect(user([
      { type: 'tool_result', tool_use_id: 'a', content: 'file not found', is_error: true },
      { type: 'tool_result', tool_use_id: 'b', is_error: true },
      { type: 'tool_result', tool_use_id: 'c' },
    ])).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'Error: file not found' },
      { role: 'tool', tool_call_id: 'b', content: 'Error' },
      { role: 'tool', tool_call_id: 'c', content: '' },
    ]);
  });

  const at = (content: unknown[]) => ({ messages: [{ role: 'user', content }] });

  it('refuses an image inside a tool_result, naming it', () => {
    expect400(
      at([{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'x' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }]),
      'messages.0.content.0.content.1',
      /image inside a tool_result/,
    );
    expect400(at([{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'search_result', source: 's', title: 't', content: [] }] }]), 'messages.0.content.0.content.0');
    expect400(at([{ type: 'tool_result', content: 'x' }]), 'messages.0.content.0.tool_use_id');
    expect400(at([{ type: 'tool_result', tool_use_id: 'a', content: 5 }]), 'messages.0.content.0.content');
  });

  it('refuses documents and images the target cannot read', () => {
    expect400(at([{ type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } }]), 'messages.0.content.0.source', /cannot fetch documents/);
    expect400(at([{ type: 'document', source: { type: 'file', file_id: 'file_1' } }]), 'messages.0.content.0.source', /Files API/);
    expect400(at([{ type: 'document', source: { type: 'base64', media_type: 'text/csv', data: 'YQ==' } }]), 'messages.0.content.0.source');
    expect400(at([{ type: 'document', source: { type: 'content', content: [{ type: 'document' }] } }]), 'messages.0.content.0.source.content.0');
    expect400(at([{ type: 'image', source: { type: 'file', file_id: 'file_1' } }]), 'messages.0.content.0.source', /Files API/);
    expect400(at([{ type: 'image', source: { type: 'base64' } }]), 'messages.0.content.0.source');
  });

  it('refuses blocks that do not belong in a user message', () => {
    expect400(at([{ type: 'tool_use', id: 'a', name: 'f', input: {} }]), 'messages.0.content.0', /cannot take in a user message/);
    expect400(at([{ type: 'search_result', source: 's', title: 't', content: [] }]), 'messages.0.content.0');
    expect400(at([{ type: 'text', text: 'ok' }, 'nope']), 'messages.0.content.1');
    expect400(at([{ type: 'text', text: 3 }]), 'messages.0.content.0.text');
  });
});

describe('messagesToChatRequest: assistant content', () => {
  const turn = (content: unknown) => convert({
    messages: [{ role: 'user', content: 'Go' }, { role: 'assistant', content }, { role: 'user', content: 'More' }],
  }).messages;

  it('carries text and tool_use as content and tool_calls', () => {
    expect(turn([
      { type: 'text', text: 'Let me look. ' },
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.txt' } },
      { type: 'tool_use', id: 'toolu_2', name: 'ls', input: {} },
    ])[1]).toEqual({
      role: 'assistant',
      content: 'Let me look. Checking.',
      tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'read', arguments: '{"path":"a.txt"}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'ls', arguments: '{}' } },
      ],
    });
  });

  it('gives tool calls alone a null content, and a string content as it is', () => {
    expect(turn([{ type: 'tool_use', id: 't', name: 'f', input: { a: 1 } }])[1]).toEqual({
      role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
    });
    expect(turn('Sure.')[1]).toEqual({ role: 'assistant', content: 'Sure.' });
  });

  it('drops thinking blocks, and a turn left with nothing', () => {
    expect(turn([
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'redacted_thinking', data: 'xyz' },
      { type: 'text', text: 'Answer.' },
    ])[1]).toEqual({ role: 'assistant', content: 'Answer.' });
    expect(turn([{ type: 'thinking', thinking: 'hmm', signature: 'sig' }])).toEqual([
      { role: 'user', content: 'Go' },
      { role: 'user', content: 'More' },
    ]);
  });

  const assistantAt = (content: unknown[]) => ({ messages: [{ role: 'user', content: 'Go' }, { role: 'assistant', content }] });

  it.each([
    ['server_tool_use', { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } }],
    ['web_search_tool_result', { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] }],
    ['code_execution_tool_result', { type: 'code_execution_tool_result', tool_use_id: 'srvtoolu_1', content: {} }],
    ['mcp_tool_use', { type: 'mcp_tool_use', id: 'x', name: 'y', server_name: 'z', input: {} }],
  ])('refuses the server-side block %s, naming it', (type, block) => {
    expect400(assistantAt([{ type: 'text', text: 'x' }, block]), 'messages.1.content.1', new RegExp(`"${type}" block of a tool that Anthropic runs itself`));
  });

  it('refuses other blocks and broken tool_use', () => {
    expect400(assistantAt([{ type: 'image', source: { type: 'url', url: 'x' } }]), 'messages.1.content.0', /cannot take in an assistant message/);
    expect400(assistantAt([{ type: 'tool_use', name: 'f', input: {} }]), 'messages.1.content.0.id');
    expect400(assistantAt([{ type: 'tool_use', id: 'a', input: {} }]), 'messages.1.content.0.name');
  });
});

describe('messagesToChatRequest: messages', () => {
  it('keeps consecutive messages of one role', () => {
    expect(convert({ messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }] }).messages).toEqual([
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ]);
  });

  it('refuses empty or missing content, naming the message', () => {
    expect400({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: '' }] }, 'messages.1.content', /is empty/);
    expect400({ messages: [{ role: 'user', content: [] }] }, 'messages.0.content', /is empty/);
    expect400({ messages: [{ role: 'user' }] }, 'messages.0.content', /is empty/);
    expect400({ messages: [{ role: 'user', content: 7 }] }, 'messages.0.content');
  });

  it('carries a system message in the middle of a conversation where it stands', () => {
    const out = convert({ messages: [{ role: 'user', content: 'a' }, { role: 'system', content: [{ type: 'text', text: 'be terse' }] }, { role: 'user', content: 'b' }] });
    expect(out.messages.map((m) => m.role)).toEqual(['user', 'system', 'user']);
    expect(out.messages[1]!.content).toBe('be terse');
  });

  it('refuses a wrong role, no messages, and a message that is not an object', () => {
    expect400({ messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.role', /"user", "assistant" or "system"/);
    expect400({ messages: [] }, 'messages');
    expect400({ messages: undefined }, 'messages');
    expect400({ messages: ['hi'] }, 'messages.0');
  });
});

describe('messagesToChatRequest: tools', () => {
  const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };

  it('turns client tools into function tools', () => {
    const out = convert({
      tools: [
        { name: 'read', description: 'Read a file', input_schema: schema, cache_control: { type: 'ephemeral' } },
        { type: 'custom', name: 'ls', input_schema: { type: 'object' }, strict: true, eager_input_streaming: true },
      ],
    });
    expect(out.tools).toEqual([
      { type: 'function', function: { name: 'read', description: 'Read a file', parameters: schema } },
      { type: 'function', function: { name: 'ls', parameters: { type: 'object' }, strict: true } },
    ]);
  });

  it('leaves out an empty tools list', () => {
    expect(convert({ tools: [] }).tools).toBeUndefined();
  });

  it.each(['web_search_20250305', 'bash_20250124', 'text_editor_20250728', 'computer_20250124', 'code_execution_20250825', 'web_fetch_20250910'])(
    'refuses the server tool %s, naming it',
    (type) => {
      expect400({ tools: [{ name: 'ok', input_schema: schema }, { type, name: 'x' }] }, 'tools.1', new RegExp(`server tool "${type}"`));
    },
  );

  it('refuses a tool without a name or with a wrong schema', () => {
    expect400({ tools: [{ input_schema: schema }] }, 'tools.0.name');
    expect400({ tools: [{ name: 'f', input_schema: 'x' }] }, 'tools.0.input_schema');
    expect400({ tools: {} }, 'tools');
    expect400({ tools: [1] }, 'tools.0');
  });

  const tools = [{ name: 'read', input_schema: schema }];

  it.each([
    [{ type: 'auto' }, { tool_choice: 'auto' }],
    [{ type: 'any' }, { tool_choice: 'required' }],
    [{ type: 'none' }, { tool_choice: 'none' }],
    [{ type: 'tool', name: 'read' }, { tool_choice: { type: 'function', function: { name: 'read' } } }],
    [{ type: 'auto', disable_parallel_tool_use: true }, { tool_choice: 'auto', parallel_tool_calls: false }],
    [{ type: 'any', disable_parallel_tool_use: true }, { tool_choice: 'required', parallel_tool_calls: false }],
    [{ type: 'tool', name: 'read', disable_parallel_tool_use: true }, { tool_choice: { type: 'function', function: { name: 'read' } }, parallel_tool_calls: false }],
  ])('maps tool_choice %j', (choice, expected) => {
    const out = convert({ tools, tool_choice: choice });
    expect({ tool_choice: out.tool_choice, ...(out.parallel_tool_calls === undefined ? {} : { parallel_tool_calls: out.parallel_tool_calls }) }).toEqual(expected);
  });

  it('leaves out tool_choice auto or none without tools, and refuses a forced one', () => {
    expect(convert({ tool_choice: { type: 'auto', disable_parallel_tool_use: true } })).not.toHaveProperty('tool_choice');
    expect(convert({ tool_choice: { type: 'none' } })).not.toHaveProperty('parallel_tool_calls');
    expect400({ tool_choice: { type: 'any' } }, 'tool_choice', /no tools/);
    expect400({ tools, tool_choice: { type: 'tool' } }, 'tool_choice.name');
    expect400({ tools, tool_choice: { type: 'sometimes' } }, 'tool_choice.type');
    expect400({ tools, tool_choice: 'auto' }, 'tool_choice');
  });
});

describe('messagesToChatRequest: thinking, effort and output format', () => {
  it.each([
    [{ type: 'enabled', budget_tokens: 1024 }, 'low'],
    [{ type: 'enabled', budget_tokens: 4095 }, 'low'],
    [{ type: 'enabled', budget_tokens: 4096 }, 'medium'],
    [{ type: 'enabled', budget_tokens: 16383 }, 'medium'],
    [{ type: 'enabled', budget_tokens: 16384 }, 'high'],
    [{ type: 'enabled', budget_tokens: 64000, display: 'summarized' }, 'high'],
    [{ type: 'adaptive' }, 'medium'],
  ])('maps thinking %j to reasoning_effort %s for a reasoning target', (thinking, effort) => {
    expect(convert({ thinking }).reasoning_effort).toBe(effort);
  });

  it('drops thinking when disabled or when the target does not reason', () => {
    expect(convert({ thinking: { type: 'disabled' } })).not.toHaveProperty('reasoning_effort');
    expect(convert({ thinking: { type: 'enabled', budget_tokens: 20000 } }, { reasons: false })).not.toHaveProperty('reasoning_effort');
    expect(convert({ output_config: { effort: 'high' } }, { reasons: false })).not.toHaveProperty('reasoning_effort');
  });

  it.each([
    ['low', 'low'],
    ['medium', 'medium'],
    ['high', 'high'],
    ['xhigh', 'high'],
    ['max', 'high'],
  ])('maps output_config.effort %s to %s, over thinking', (effort, expected) => {
    expect(convert({ output_config: { effort }, thinking: { type: 'enabled', budget_tokens: 1024 } }).reasoning_effort).toBe(expected);
  });

  it('refuses wrong thinking and effort values, even for a target that does not reason', () => {
    expect400({ thinking: { type: 'enabled' } }, 'thinking.budget_tokens', undefined, { reasons: false });
    expect400({ thinking: { type: 'sometimes' } }, 'thinking.type');
    expect400({ thinking: 'on' }, 'thinking');
    expect400({ output_config: { effort: 'extreme' } }, 'output_config.effort', undefined, { reasons: false });
  });

  it('turns a JSON schema output format into a strict response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    expect(convert({ output_config: { format: { type: 'json_schema', schema } } }).response_format).toEqual({
      type: 'json_schema', json_schema: { name: 'output', schema, strict: true },
    });
  });

  it('refuses a wrong output_config', () => {
    expect400({ output_config: { format: { type: 'xml' } } }, 'output_config.format');
    expect400({ output_config: { verbosity: 'low' } }, 'output_config.verbosity', /^Unknown field "output_config.verbosity"/);
    expect400({ output_config: 'json' }, 'output_config');
  });
});

describe('messagesToChatRequest: a Claude Code turn', () => {
  it('translates a realistic agent request end to end', () => {
    const out = messagesToChatRequest({
      model: 'claude-sonnet-4-5',
      max_tokens: 32000,
      stream: true,
      system: [
        { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Work in /repo.' },
      ],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'List the files.' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should run ls.', signature: 'EqQ...' },
            { type: 'text', text: 'Listing.' },
            { type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'ls' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01', content: 'a.ts\nb.ts', cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'Now read a.ts' },
          ],
        },
      ],
      tools: [{ name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
      thinking: { type: 'enabled', budget_tokens: 10000 },
      metadata: { user_id: 'user_abc' },
    }, OPTS);
    expect(out).toEqual({
      model: 'gpt-x',
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 32000,
      reasoning_effort: 'medium',
      messages: [
        { role: 'system', content: 'You are Claude Code.\n\nWork in /repo.' },
        { role: 'user', content: 'List the files.' },
        { role: 'assistant', content: 'Listing.', tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }] },
        { role: 'tool', tool_call_id: 'toolu_01', content: 'a.ts\nb.ts' },
        { role: 'user', content: 'Now read a.ts' },
      ],
      tools: [{ type: 'function', function: { name: 'Bash', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }],
    });
  });
});
