import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../contract/errors.js';
import type { ResponsesInputItem, ResponsesRequest } from './responses-api.js';
import { DROPPED_RESPONSES_HINTS, type ResponsesToChatOptions, responsesToChatRequest } from './responses-to-chat-request.js';

const OPTS: ResponsesToChatOptions = { model: 'claude-x', maxTokensField: 'max_tokens', reasons: true };
const PNG = 'data:image/png;base64,iVBORw0KGgo=';

function req(extra: Record<string, unknown> = {}): ResponsesRequest {
  return { model: 'gpt-5', input: 'Hi', ...extra } as ResponsesRequest;
}

function convert(extra: Record<string, unknown> = {}, opts: Partial<ResponsesToChatOptions> = {}) {
  return responsesToChatRequest(req(extra), { ...OPTS, ...opts });
}

function refusal(extra: Record<string, unknown>, opts: Partial<ResponsesToChatOptions> = {}): AgentgwError {
  try {
    convert(extra, opts);
  } catch (e) {
    if (e instanceof AgentgwError) return e;
    throw e;
  }
  throw new Error('expected a 400');
}

function expect400(extra: Record<string, unknown>, param: string, message?: RegExp, opts: Partial<ResponsesToChatOptions> = {}): void {
  const e = refusal(extra, opts);
  expect(e.code).toBe('validation_failed');
  expect(e.status).toBe(400);
  expect(e.param).toBe(param);
  if (message) expect(e.message).toMatch(message);
}

const fn = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'function', name, parameters: { type: 'object', properties: {} }, ...extra });

describe('responsesToChatRequest: top level', () => {
  it('turns a string input into a user message, instructions into a leading system message', () => {
    const { request, droppedTools } = convert({ instructions: 'Be brief.', temperature: 0.2, top_p: 0.9, max_output_tokens: 500 });
    expect(request).toEqual({
      model: 'claude-x',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }],
      max_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
    });
    expect(droppedTools).toEqual([]);
    expect(convert({ max_output_tokens: 64 }, { maxTokensField: 'max_completion_tokens' }).request).toMatchObject({ max_completion_tokens: 64 });
  });

  it('asks for usage in the stream', () => {
    expect(convert({ stream: true }).request).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(convert({ stream: false }).request.stream).toBeUndefined();
  });

  it('accepts the gateway fields and the hints, and sends none of them upstream', () => {
    const { request } = convert({
      store: false, previous_response_id: 'resp_1', include: ['reasoning.encrypted_content'], prompt_cache_key: 'k', prompt_cache_retention: '24h',
      metadata: { a: 'b' }, service_tier: 'priority', truncation: 'auto', stream_options: { include_obfuscation: false }, context_management: [],
      background: false, conversation: null, prompt: null, top_logprobs: 0, max_tool_calls: null,
    });
    expect(request).toEqual({ model: 'claude-x', messages: [{ role: 'user', content: 'Hi' }] });
  });

  it('carries user, else safety_identifier, as user', () => {
    expect(convert({ user: 'u1', safety_identifier: 's1' }).request.user).toBe('u1');
    expect(convert({ safety_identifier: 's1' }).request.user).toBe('s1');
  });

  it('refuses unknown and not carryable fields, naming them', () => {
    expect400({ temprature: 1 }, 'temprature', /Unknown field "temprature"/);
    expect400({ background: true }, 'background', /cannot be carried over/);
    expect400({ conversation: 'conv_1' }, 'conversation', /previous_response_id/);
    expect400({ prompt: { id: 'pmpt_1' } }, 'prompt');
    expect400({ top_logprobs: 5 }, 'top_logprobs');
    expect400({ moderation: { model: 'omni-moderation-latest' } }, 'moderation');
  });

  it('refuses bad values, naming the field', () => {
    expect400({ max_output_tokens: 0 }, 'max_output_tokens');
    expect400({ max_output_tokens: 1.5 }, 'max_output_tokens');
    expect400({ temperature: 'hot' }, 'temperature');
    expect400({ stream: 'yes' }, 'stream');
    expect400({ store: 'no' }, 'store');
    expect400({ previous_response_id: 7 }, 'previous_response_id');
    expect400({ instructions: ['x'] }, 'instructions');
    expect400({ input: 42 }, 'input');
    expect400({ input: '' }, 'input');
    expect400({ input: [] }, 'input');
    expect400({ input: undefined, instructions: 'only instructions' }, 'input');
  });

  it('refuses a body that is not an object', () => {
    expect(() => responsesToChatRequest([] as unknown as ResponsesRequest, OPTS)).toThrow(AgentgwError);
  });

  it('documents what it drops', () => {
    const fields = DROPPED_RESPONSES_HINTS.map((h) => h.field).join(' ');
    for (const f of ['include', 'prompt_cache_key', 'metadata', 'service_tier', 'truncation', 'reasoning', 'web_search', 'text.verbosity']) {
      expect(fields).toContain(f);
    }
    expect(DROPPED_RESPONSES_HINTS.every((h) => h.why.length > 10)).toBe(true);
  });
});

describe('responsesToChatRequest: input items', () => {
  it('converts messages of every role and their content parts', () => {
    const { request } = convert({
      input: [
        { role: 'developer', content: 'Use tools.' },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'A' }, { type: 'input_text', text: 'B' }] },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look:' },
            { type: 'input_image', image_url: PNG, detail: 'high' },
            { type: 'input_image', image_url: 'https://x/y.png', detail: 'original' },
            { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
            { type: 'input_file', file_data: 'JVBERi0=' },
          ],
        },
        { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Seen ', annotations: [] }, { type: 'output_text', text: 'it.', annotations: [] }] },
        { role: 'user', content: [{ type: 'input_text', text: 'Thanks' }] },
      ],
    });
    expect(request.messages).toEqual([
      { role: 'system', content: 'Use tools.' },
      { role: 'system', content: 'A\n\nB' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image_url', image_url: { url: PNG, detail: 'high' } },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
          { type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
        ],
      },
      { role: 'assistant', content: 'Seen it.' },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  it('joins an assistant message and the function calls after it into one message, outputs into tool messages', () => {
    const { request } = convert({
      input: [
        { role: 'user', content: 'Read both' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Two reads.' }], encrypted_content: 'gAAAA' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Reading.', annotations: [] }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'read', arguments: '{"p":"a"}', status: 'completed' },
        { type: 'function_call', call_id: 'call_b', name: 'read', arguments: '{"p":"b"}' },
        { type: 'function_call_output', call_id: 'call_a', output: 'A' },
        { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: 'B1' }, { type: 'input_text', text: 'B2' }] },
        { type: 'function_call', call_id: 'call_c', name: 'read', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_c', output: '' },
      ],
    });
    expect(request.messages).toEqual([
      { role: 'user', content: 'Read both' },
      {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'read', arguments: '{"p":"a"}' } },
          { id: 'call_b', type: 'function', function: { name: 'read', arguments: '{"p":"b"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      { role: 'tool', tool_call_id: 'call_b', content: 'B1\n\nB2' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'read', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_c', content: '' },
    ]);
  });

  it('keeps two assistant messages apart, and a message after calls in a new turn', () => {
    const { request } = convert({
      input: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'one' },
        { role: 'assistant', content: 'two' },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { role: 'assistant', content: 'three' },
      ],
    });
    expect(request.messages.slice(1)).toEqual([
      { role: 'assistant', content: 'one' },
      { role: 'assistant', content: 'two', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'assistant', content: 'three' },
    ]);
  });

  it('moves images of tool outputs into a user message after the run of tool messages', () => {
    const { request } = convert({
      input: [
        { role: 'user', content: 'Look at both' },
        { type: 'function_call', call_id: 'c1', name: 'view_image', arguments: '{"path":"a.png"}' },
        { type: 'function_call', call_id: 'c2', name: 'view_image', arguments: '{"path":"b.png"}' },
        { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_image', image_url: PNG }] },
        { type: 'function_call_output', call_id: 'c2', output: 'not found' },
        { role: 'user', content: 'Well?' },
      ],
    });
    expect(request.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: '(an attachment follows in the next user message)' },
      { role: 'tool', tool_call_id: 'c2', content: 'not found' },
      { role: 'user', content: [{ type: 'text', text: 'Attachments of the result of tool call c1:' }, { type: 'image_url', image_url: { url: PNG } }] },
      { role: 'user', content: 'Well?' },
    ]);
  });

  it('leaves out reasoning, compaction and records of tools OpenAI ran', () => {
    const { request } = convert({
      input: [
        { role: 'user', content: 'Search' },
        { type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAA' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
        { type: 'mcp_list_tools', id: 'mcpl_1', server_label: 's', tools: [] },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Found.', annotations: [{ type: 'url_citation' }] }] },
      ],
    });
    expect(request.messages).toEqual([{ role: 'user', content: 'Search' }, { role: 'assistant', content: 'Found.' }]);
  });

  it('turns custom tool calls into calls of the function that stands for the tool', () => {
    const { request } = convert({
      tools: [{ type: 'custom', name: 'apply_patch' }],
      input: [
        { role: 'user', content: 'Fix it' },
        { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' },
        { type: 'custom_tool_call_output', call_id: 'c1', output: 'Done' },
      ],
    });
    expect(request.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n*** End Patch' }) } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'Done' },
    ]);
  });

  it('prepends history rebuilt from previous_response_id, after the instructions of this turn', () => {
    const history: ResponsesInputItem[] = [
      { role: 'user', content: 'Weather in Paris?' },
      { type: 'reasoning', id: 'rs_0', summary: [], encrypted_content: 'gAAAA' },
      { type: 'function_call', id: 'fc_0', call_id: 'call_w', name: 'weather', arguments: '{"city":"Paris"}', status: 'completed' },
    ];
    const { request } = convert(
      { instructions: 'Now.', previous_response_id: 'resp_0', input: [{ type: 'function_call_output', call_id: 'call_w', output: '18C' }] },
      { history },
    );
    expect(request.messages).toEqual([
      { role: 'system', content: 'Now.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_w', content: '18C' },
    ]);
  });

  it('refuses items and parts the target cannot take, naming them', () => {
    expect400({ input: [{ role: 'user', content: 'x' }, { type: 'item_reference', id: 'msg_1' }] }, 'input.1', /item_reference/);
    expect400({ input: [{ type: 'local_shell_call', id: 'lsh_1', call_id: 'c', action: {} }] }, 'input.0', /only OpenAI's models call/);
    expect400({ input: [{ type: 'computer_call_output', call_id: 'c', output: {} }] }, 'input.0');
    expect400({ input: [{ type: 'telepathy' }] }, 'input.0.type', /"telepathy"/);
    expect400({ input: ['hi'] }, 'input.0');
    expect400({ input: [{ content: 'no role' }] }, 'input.0.type');
    expect400({ input: [{ role: 'tool', content: 'x' }] }, 'input.0.role');
    expect400({ input: [{ role: 'user', content: [] }] }, 'input.0.content', /empty/);
    expect400({ input: [{ role: 'user', content: 7 }] }, 'input.0.content');
    expect400({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }, 'input.0.content.0.file_id', /Files API/);
    expect400({ input: [{ role: 'user', content: [{ type: 'input_image' }] }] }, 'input.0.content.0.image_url');
    expect400({ input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://x/a.pdf' }] }] }, 'input.0.content.0.file_url', /cannot fetch/);
    expect400({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] }, 'input.0.content.0.file_id');
    expect400({ input: [{ role: 'user', content: [{ type: 'input_file' }] }] }, 'input.0.content.0');
    expect400({ input: [{ role: 'user', content: [{ type: 'input_audio' }] }] }, 'input.0.content.0.type');
    expect400({ input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'input.0.content.0.text');
    expect400({ input: [{ role: 'system', content: [{ type: 'input_image', image_url: PNG }] }] }, 'input.0.content.0', /only text/);
    expect400({ input: [{ role: 'assistant', content: [{ type: 'input_image', image_url: PNG }] }] }, 'input.0.content.0');
    expect400({ input: [{ role: 'assistant', content: [{ type: 'refusal' }] }] }, 'input.0.content.0.refusal');
    expect400({ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input.0.call_id');
    expect400({ input: [{ type: 'function_call', call_id: 'c', arguments: '{}' }] }, 'input.0.name');
    expect400({ input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] }, 'input.0.arguments');
    expect400({ input: [{ type: 'custom_tool_call', call_id: 'c', name: 'f' }] }, 'input.0.input');
    expect400({ input: [{ type: 'function_call_output', output: 'x' }] }, 'input.0.call_id');
    const call = { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' };
    expect400({ input: [call, { type: 'function_call_output', call_id: 'c', output: 5 }] }, 'input.1.output');
    expect400({ input: [{ type: 'function_call_output', call_id: 'c', output: 'x' }] }, 'input.0.call_id', /No function_call or custom_tool_call with call_id "c"/);
    expect400({ input: [call, { type: 'function_call_output', call_id: 'other', output: 'x' }] }, 'input.1.call_id');
  });

  it('leaves out an assistant message with nothing in it', () => {
    const { request } = convert({ input: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: '' }, { role: 'user', content: 'again' }] });
    expect(request.messages).toEqual([{ role: 'user', content: 'hi' }, { role: 'user', content: 'again' }]);
  });

  it('names previous_response_id when an earlier turn cannot continue on the target', () => {
    expect400({}, 'previous_response_id', /earlier conversation.*"local_shell_call"/, { history: [{ type: 'local_shell_call', call_id: 'c' } as unknown as ResponsesInputItem] });
  });
});

describe('responsesToChatRequest: tools', () => {
  it('turns function tools into chat tools, carrying strict only when given', () => {
    const { request } = convert({
      tools: [fn('read', { description: 'Read a file', strict: false }), { type: 'function', name: 'now', parameters: null }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    expect(request.tools).toEqual([
      { type: 'function', function: { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: {} }, strict: false } },
      { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(request.tool_choice).toBe('auto');
    expect(request.parallel_tool_calls).toBe(false);
  });

  it('turns a custom tool into a function of one string argument, telling its grammar', () => {
    const { request, tools } = convert({ tools: [{ type: 'custom', name: 'apply_patch', description: 'Edit files', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } }] });
    expect(request.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'apply_patch',
          description: 'Edit files',
          parameters: {
            type: 'object',
            properties: { input: { type: 'string', description: 'The raw input, which must match this Lark grammar:\nstart: "x"' } },
            required: ['input'],
            additionalProperties: false,
          },
        },
      },
    ]);
    expect(tools.get('apply_patch')).toEqual({ kind: 'custom', name: 'apply_patch' });
  });

  it('flattens namespace tools into <namespace>__<name>', () => {
    const { request, tools } = convert({
      tools: [{ type: 'namespace', name: 'github', description: 'GitHub tools', tools: [fn('search'), { type: 'custom', name: 'note' }] }],
      tool_choice: { type: 'function', name: 'search' },
    });
    expect(request.tools!.map((t) => t.function.name)).toEqual(['github__search', 'github__note']);
    expect(request.tools![0].function.description).toBe('(github: GitHub tools)');
    expect(request.tool_choice).toEqual({ type: 'function', function: { name: 'github__search' } });
    expect(tools.get('github__note')).toEqual({ kind: 'custom', name: 'note', namespace: 'github' });
  });

  it('leaves out built-in tools and names them, web_search included (Codex always offers it)', () => {
    const { request, droppedTools } = convert({
      tools: [
        fn('shell'),
        { type: 'web_search', search_context_size: 'low' },
        { type: 'web_search_preview' },
        { type: 'file_search', vector_store_ids: ['vs_1'] },
        { type: 'code_interpreter', container: { type: 'auto' } },
        { type: 'computer_use_preview', display_width: 1, display_height: 1, environment: 'linux' },
        { type: 'image_generation' },
        { type: 'local_shell' },
        { type: 'mcp', server_label: 'a', server_url: 'https://a' },
        { type: 'mcp', server_label: 'b', server_url: 'https://b' },
      ],
      tool_choice: 'auto',
    });
    expect(request.tools!.map((t) => t.function.name)).toEqual(['shell']);
    expect(droppedTools).toEqual(['web_search', 'web_search_preview', 'file_search', 'code_interpreter', 'computer_use_preview', 'image_generation', 'local_shell', 'mcp']);
  });

  it('sends no tools, tool_choice or parallel_tool_calls when only built-in tools were offered', () => {
    const { request, droppedTools } = convert({ tools: [{ type: 'web_search' }], tool_choice: 'auto', parallel_tool_calls: true });
    expect(request.tools).toBeUndefined();
    expect(request.tool_choice).toBeUndefined();
    expect(request.parallel_tool_calls).toBeUndefined();
    expect(droppedTools).toEqual(['web_search']);
  });

  it('maps tool_choice', () => {
    const tools = [fn('a'), fn('b'), { type: 'custom', name: 'c' }];
    expect(convert({ tools, tool_choice: 'none' }).request.tool_choice).toBe('none');
    expect(convert({ tools, tool_choice: 'required' }).request.tool_choice).toBe('required');
    expect(convert({ tools, tool_choice: { type: 'function', name: 'b' } }).request.tool_choice).toEqual({ type: 'function', function: { name: 'b' } });
    expect(convert({ tools, tool_choice: { type: 'custom', name: 'c' } }).request.tool_choice).toEqual({ type: 'function', function: { name: 'c' } });
    const allowed = convert({ tools: [...tools, { type: 'web_search' }], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'a' }, { type: 'web_search' }] } }).request;
    expect(allowed.tool_choice).toBe('required');
    expect(allowed.tools!.map((t) => t.function.name)).toEqual(['a']);
  });

  it('refuses a tool_choice that requires a tool the target cannot run, naming it', () => {
    expect400({ tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search_preview' } }, 'tool_choice', /"web_search_preview"/);
    expect400({ tools: [{ type: 'file_search', vector_store_ids: [] }], tool_choice: { type: 'file_search' } }, 'tool_choice', /"file_search"/);
    expect400({ tools: [{ type: 'mcp', server_label: 'x' }], tool_choice: { type: 'mcp', server_label: 'x' } }, 'tool_choice', /"mcp"/);
    expect400({ tools: [{ type: 'web_search' }], tool_choice: 'required' }, 'tool_choice', /"web_search"/);
    expect400({ tools: [fn('a'), { type: 'web_search' }], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search' }] } }, 'tool_choice', /"web_search"/);
  });

  it('refuses bad tools and tool choices, naming the field', () => {
    expect400({ tools: {} }, 'tools');
    expect400({ tools: ['x'] }, 'tools.0');
    expect400({ tools: [{ name: 'untyped' }] }, 'tools.0');
    expect400({ tools: [{ type: 'function' }] }, 'tools.0.name');
    expect400({ tools: [fn('a', { parameters: 'x' })] }, 'tools.0.parameters');
    expect400({ tools: [fn('a', { strict: 'yes' })] }, 'tools.0.strict');
    expect400({ tools: [fn('a', { description: 3 })] }, 'tools.0.description');
    expect400({ tools: [fn('a'), fn('a')] }, 'tools.1', /Two tools/);
    expect400({ tools: [{ type: 'custom', name: 'c', format: { type: 'grammar', syntax: 'ebnf', definition: 'x' } }] }, 'tools.0.format.syntax');
    expect400({ tools: [{ type: 'custom', name: 'c', format: { type: 'grammar', syntax: 'lark' } }] }, 'tools.0.format.definition');
    expect400({ tools: [{ type: 'custom', name: 'c', format: 'text' }] }, 'tools.0.format');
    expect400({ tools: [{ type: 'namespace', name: 'n', tools: [] }] }, 'tools.0.tools');
    expect400({ tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'web_search' }] }] }, 'tools.0.tools.0.type');
    expect400({ tools: [fn('a')], tool_choice: 'any' }, 'tool_choice');
    expect400({ tools: [fn('a')], tool_choice: 5 }, 'tool_choice');
    expect400({ tools: [fn('a')], tool_choice: { type: 'function' } }, 'tool_choice.name');
    expect400({ tools: [fn('a')], tool_choice: { type: 'function', name: 'zzz' } }, 'tool_choice.name', /"zzz"/);
    expect400({ tools: [fn('a')], tool_choice: { type: 'custom', name: 'a' } }, 'tool_choice.name');
    expect400({ tools: [fn('a')], tool_choice: { type: 'allowed_tools', mode: 'any', tools: [] } }, 'tool_choice.mode');
    expect400({ tools: [fn('a')], tool_choice: { type: 'allowed_tools', mode: 'auto' } }, 'tool_choice.tools');
    expect400({ tools: [fn('a')], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'b' }] } }, 'tool_choice.tools.0.name');
    expect400({ tools: [fn('a')], tool_choice: 'required', parallel_tool_calls: 'no' }, 'parallel_tool_calls');
    expect400({ tool_choice: 'required' }, 'tool_choice');
    expect400({ tool_choice: { type: 'function', name: 'a' } }, 'tool_choice.name');
  });

  it('drops auto and none without tools', () => {
    expect(convert({ tool_choice: 'auto' }).request.tool_choice).toBeUndefined();
    expect(convert({ tool_choice: 'none' }).request.tool_choice).toBeUndefined();
  });
});

describe('responsesToChatRequest: text.format and reasoning', () => {
  it('maps text.format to response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    expect(convert({ text: { format: { type: 'json_schema', name: 'out', schema, strict: true, description: 'd' } } }).request.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'out', schema, strict: true, description: 'd' },
    });
    expect(convert({ text: { format: { type: 'json_object' } } }).request.response_format).toEqual({ type: 'json_object' });
    expect(convert({ text: { format: { type: 'text' }, verbosity: 'low' } }).request.response_format).toBeUndefined();
  });

  it('refuses bad text settings, naming the field', () => {
    expect400({ text: 'json' }, 'text');
    expect400({ text: { format: { type: 'json_schema', schema: {} } } }, 'text.format.name');
    expect400({ text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format.schema');
    expect400({ text: { format: { type: 'json_schema', name: 'x', schema: {}, strict: 'y' } } }, 'text.format.strict');
    expect400({ text: { format: { type: 'yaml' } } }, 'text.format.type');
    expect400({ text: { format: 'text' } }, 'text.format');
    expect400({ text: { verbosity: 'loud' } }, 'text.verbosity');
    expect400({ text: { formats: {} } }, 'text.formats');
  });

  it('maps reasoning.effort to reasoning_effort for targets that reason', () => {
    const effort = (e: unknown, reasons = true) => convert({ reasoning: { effort: e, summary: 'auto' } }, { reasons }).request.reasoning_effort;
    expect(effort('minimal')).toBe('low');
    expect(effort('low')).toBe('low');
    expect(effort('medium')).toBe('medium');
    expect(effort('high')).toBe('high');
    expect(effort('xhigh')).toBe('high');
    expect(effort('max')).toBe('high');
    expect(effort('none')).toBeUndefined();
    expect(effort(null)).toBeUndefined();
    expect(effort('high', false)).toBeUndefined();
  });

  it('refuses bad reasoning settings, naming the field', () => {
    expect400({ reasoning: 'high' }, 'reasoning');
    expect400({ reasoning: { effort: 'extreme' } }, 'reasoning.effort');
    expect400({ reasoning: { summary: 'long' } }, 'reasoning.summary');
  });
});

describe('responsesToChatRequest: a recorded Codex request', () => {
  it('translates what Codex sends', () => {
    const codex = {
      model: 'gpt-5-codex',
      instructions: 'You are Codex, based on GPT-5.',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>cwd</environment_context>' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list files' }] },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: '**Listing**' }], content: null, encrypted_content: 'gAAAAB' },
        { type: 'function_call', name: 'shell_command', arguments: '{"command":"ls"}', call_id: 'call_1' },
        { type: 'function_call_output', call_id: 'call_1', output: 'Exit code: 0\nREADME.md' },
      ],
      tools: [
        { type: 'function', name: 'shell_command', description: 'Runs a shell command', strict: false, parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false } },
        { type: 'custom', name: 'apply_patch', description: 'Use the apply_patch tool to edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' } },
        { type: 'web_search', external_web_access: false },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning: { effort: 'medium', summary: 'auto' },
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: '0199a0b4-session',
      text: { verbosity: 'low' },
    };
    const { request, droppedTools } = responsesToChatRequest(codex as unknown as ResponsesRequest, { model: 'claude-sonnet-4', maxTokensField: 'max_tokens', reasons: true });
    expect(droppedTools).toEqual(['web_search']);
    expect(request.messages.map((m) => m.role)).toEqual(['system', 'system', 'user', 'user', 'assistant', 'tool']);
    expect(request.tools!.map((t) => t.function.name)).toEqual(['shell_command', 'apply_patch']);
    expect(request).toMatchObject({ stream: true, stream_options: { include_usage: true }, tool_choice: 'auto', parallel_tool_calls: false, reasoning_effort: 'medium' });
  });
});
