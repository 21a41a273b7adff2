import { describe, expect, it } from 'vitest';
import type { ToolDecision, ToolRules } from '../../policy/tool-rules.js';
import type { Usage } from '../../providers/spec.js';
import { ChatToolFilter, gateChatCompletion } from './chat-tool-calls.js';
import { ToolGate, frameData, sseFrames } from './gate.js';
import { type StreamToolFilter, ToolGatedSource } from './gated-source.js';
import { MessagesToolFilter, gateMessage } from './messages-tool-calls.js';
import { withoutDeniedTools } from './offered-tools.js';
import { ResponsesToolFilter, gateResponse, responsesCallView } from './responses-tool-calls.js';

/** Rules as the decision module would answer: tools named deny* are denied by rule 2 of policy p1; `forbidden` outright. */
const rules: ToolRules = {
  decide(call): ToolDecision {
    if (call.name.startsWith('deny')) return { action: 'deny', policyId: 'p1', rule: 2, reason: 'not here' };
    if (call.name === 'ask') return { action: 'approve', policyId: 'p1', rule: 3, reason: null };
    return { action: 'allow', policyId: null, rule: null, reason: null };
  },
  deniesOutright: (name) => name === 'forbidden',
};
const refusal = (tool: string) => `agentgw refused the call to ${tool}: not here (policy p1, rule 2)`;

async function relay(frames: string[], filter: StreamToolFilter, last: string): Promise<string> {
  const source = {
    async *[Symbol.asyncIterator]() {
      for (const f of frames) yield f;
    },
    usage: (): Usage => ({ prompt_tokens: 0, completion_tokens: 0 }) as Usage,
  };
  let out = '';
  for await (const text of new ToolGatedSource(source, filter)) out += text;
  return out + (await filter.close(last, false));
}

const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const ev = (type: string, o: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;

describe('chat completions', () => {
  it('takes a denied call out of a completion, keeps the allowed one, and ends the turn when none is left', async () => {
    const body = {
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'deny_rm', arguments: '{"path":"/"}' } },
              { id: 'c2', type: 'function', function: { name: 'read', arguments: '{}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const gate = new ToolGate(rules);
    expect(await gateChatCompletion(body, gate)).toBe(true);
    expect(body.choices[0]!.message).toEqual({ role: 'assistant', content: refusal('deny_rm'), tool_calls: [{ id: 'c2', type: 'function', function: { name: 'read', arguments: '{}' } }] });
    expect(body.choices[0]!.finish_reason).toBe('tool_calls');
    expect(gate.records.map((r) => [r.id, r.decision, r.rule])).toEqual([
      ['c1', 'denied', { policy_id: 'p1', index: 2 }],
      ['c2', 'allowed', null],
    ]);
    const only = { choices: [{ index: 0, message: { role: 'assistant', content: 'Sure.', tool_calls: [{ id: 'c', type: 'function', function: { name: 'ask', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] };
    expect(await gateChatCompletion(only, new ToolGate(rules))).toBe(true);
    expect(only.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: 'Sure.\nagentgw refused the call to ask: needs approval, and approvals are not enabled (policy p1, rule 3)' },
      finish_reason: 'stop',
    });
  });

  it('holds call deltas until the choice finishes, renumbers the calls left and replaces a denied one by content', async () => {
    const env = { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm' };
    const chunk = (delta: unknown, finish: string | null = null) => data({ ...env, choices: [{ index: 0, delta, finish_reason: finish }] });
    const frames = [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Let me look.' }),
      chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'deny_rm', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"/"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'c2', type: 'function', function: { name: 'read', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      data({ ...env, choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
    ];
    const out = await relay(frames, new ChatToolFilter(new ToolGate(rules)), 'data: [DONE]\n\n');
    const got = sseFrames(out);
    expect(got.slice(0, 2)).toEqual(frames.slice(0, 2));
    expect(frameData(got[2]!)).toEqual({ ...env, choices: [{ index: 0, delta: { content: `\n${refusal('deny_rm')}` }, finish_reason: null }] });
    expect(frameData(got[3]!)).toEqual({ ...env, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c2', type: 'function', function: { name: 'read', arguments: '{}' } }] }, finish_reason: null }] });
    expect(got.slice(4)).toEqual([frames[6], frames[7], 'data: [DONE]\n\n']);
  });

  it('reads a frame whose JSON spreads over several data lines as an SSE client joins them, so its call is decided', async () => {
    const chunk = (delta: unknown, finish: string | null = null) => data({ id: 'x', choices: [{ index: 0, delta, finish_reason: finish }] });
    const call = { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'deny_x', arguments: '{}' } }] };
    // The same event in two data lines, split where JSON allows a line break.
    const split = `data: {"id":"x","choices":[{"index":0,\ndata: "delta":${JSON.stringify(call)},"finish_reason":null}]}\n\n`;
    expect(frameData(split)).toEqual({ id: 'x', choices: [{ index: 0, delta: call, finish_reason: null }] });
    const out = await relay([split, chunk({}, 'tool_calls')], new ChatToolFilter(new ToolGate(rules)), 'data: [DONE]\n\n');
    expect(out).not.toContain('"deny_x"');
    expect(out).toContain(refusal('deny_x'));
  });

  it('ends the turn of a stream whose every call is denied', async () => {
    const chunk = (delta: unknown, finish: string | null = null) => data({ id: 'x', choices: [{ index: 0, delta, finish_reason: finish }] });
    const out = await relay(
      [chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'deny_x', arguments: '{}' } }] }), chunk({}, 'tool_calls')],
      new ChatToolFilter(new ToolGate(rules)),
      'data: [DONE]\n\n',
    );
    expect(sseFrames(out).map((f) => frameData(f)?.choices)).toEqual([
      [{ index: 0, delta: { role: 'assistant', content: refusal('deny_x') }, finish_reason: null }],
      [{ index: 0, delta: {}, finish_reason: 'stop' }],
      undefined,
    ]);
  });

  it('splits a frame carrying several calls and the finish_reason at once (as adapters send whole calls)', async () => {
    const frame = data({
      id: 'x',
      choices: [
        {
          index: 0,
          delta: {
            role: 'assistant',
            content: 'Both.',
            tool_calls: [
              { index: 0, id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } },
              { index: 1, id: 'c2', type: 'function', function: { name: 'deny_rm', arguments: '{}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    });
    const out = await relay([frame], new ChatToolFilter(new ToolGate(rules)), 'data: [DONE]\n\n');
    expect(sseFrames(out).map((f) => frameData(f)?.choices)).toEqual([
      [{ index: 0, delta: { role: 'assistant', content: 'Both.' }, finish_reason: null }],
      [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }] }, finish_reason: null }],
      [{ index: 0, delta: { role: 'assistant', content: `\n${refusal('deny_rm')}` }, finish_reason: null }],
      [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
      undefined,
    ]);
  });
});

describe('messages', () => {
  it('replaces a denied tool_use block by a text block at its index and ends the turn', async () => {
    const message = { content: [{ type: 'text', text: 'a' }, { type: 'tool_use', id: 't1', name: 'deny_bash', input: { command: 'rm -rf /' } }], stop_reason: 'tool_use' };
    expect(await gateMessage(message, new ToolGate(rules))).toBe(true);
    expect(message).toEqual({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: refusal('deny_bash') }], stop_reason: 'end_turn' });
  });

  it('streams text as it comes and a denied tool_use between two text blocks as a text block', async () => {
    const frames = [
      ev('message_start', { message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'c', stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } }),
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'one' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 't1', name: 'deny_bash', input: {} } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"command":' } }),
      'event: ping\ndata: {"type": "ping"}\n\n',
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '"rm -rf /"}' } }),
      ev('content_block_stop', { index: 1 }),
      ev('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 't2', name: 'read', input: {} } }),
      ev('content_block_stop', { index: 2 }),
      ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } }),
      ev('message_stop', {}),
    ];
    const gate = new ToolGate(rules);
    const out = await relay(frames, new MessagesToolFilter(gate), '');
    expect(out).toBe(
      frames.slice(0, 4).join('') +
        frames[6] +
        ev('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }) +
        ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: refusal('deny_bash') } }) +
        ev('content_block_stop', { index: 1 }) +
        frames.slice(9).join(''),
    );
    expect(gate.records.map((r) => r.decision)).toEqual(['denied', 'allowed']);
  });
});

describe('responses', () => {
  it('replaces a denied call item by a message item in a response', async () => {
    const response = { output: [{ type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'deny_x', arguments: '{}' }, { type: 'local_shell_call', id: 'ls', call_id: 'c', action: { type: 'exec', command: ['ls'] } }] };
    const gate = new ToolGate(rules);
    expect(await gateResponse(response, gate)).toBe(true);
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: refusal('deny_x') }] });
    expect(response.output[1]!.type).toBe('local_shell_call');
    expect(gate.records.map((r) => [r.id, r.name, r.decision])).toEqual([
      ['call_1', 'deny_x', 'denied'],
      ['c', 'local_shell', 'allowed'],
    ]);
  });

  it('streams a message item in a denied call item\'s place, sequence numbers moved and the terminal response edited', async () => {
    let seq = 0;
    const e = (type: string, o: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...o })}\n\n`;
    const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'deny_x', arguments: '' };
    const frames = [
      e('response.created', { response: { id: 'r', output: [] } }),
      e('response.output_item.added', { output_index: 0, item: { ...call, status: 'in_progress' } }),
      e('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 0, delta: '{}' }),
      e('response.function_call_arguments.done', { item_id: 'fc_1', output_index: 0, arguments: '{}' }),
      e('response.output_item.done', { output_index: 0, item: { ...call, arguments: '{}', status: 'completed' } }),
      e('response.output_item.added', { output_index: 1, item: { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'read', arguments: '', status: 'in_progress' } }),
      e('response.output_item.done', { output_index: 1, item: { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'read', arguments: '{}', status: 'completed' } }),
    ];
    const last = e('response.completed', { response: { id: 'r', output: [{ ...call, arguments: '{}' }, { type: 'function_call', id: 'fc_2' }] } });
    const filter = new ResponsesToolFilter(new ToolGate(rules));
    const got = sseFrames(await relay(frames, filter, last)).map((f) => frameData(f)!);
    expect(got.map((d) => d.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(got.map((d) => d.type)).toEqual([
      'response.created',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.output_item.done',
      'response.completed',
    ]);
    const message = got[6]!.item as { id: string; type: string };
    expect(message.type).toBe('message');
    expect((got[9]!.response as { output: unknown[] }).output).toEqual([message, { type: 'function_call', id: 'fc_2' }]);
    expect(filter.replaced.get('fc_1')).toEqual(message);
  });
});

describe('responses, interleaved', () => {
  it('holds two call items whose events interleave, each until its own done, and numbers what it sends in order', async () => {
    let seq = 0;
    const e = (type: string, o: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...o })}\n\n`;
    const a = { type: 'function_call', id: 'fc_a', call_id: 'call_a', name: 'read', arguments: '' };
    const b = { type: 'custom_tool_call', id: 'ct_b', call_id: 'call_b', name: 'deny_patch', input: '' };
    const frames = [
      e('response.output_item.added', { output_index: 0, item: a }),
      e('response.output_item.added', { output_index: 1, item: b }),
      e('response.custom_tool_call_input.delta', { item_id: 'ct_b', output_index: 1, delta: '*** Begin' }),
      e('response.output_item.done', { output_index: 1, item: { ...b, input: '*** Begin' } }),
      e('response.function_call_arguments.delta', { item_id: 'fc_a', output_index: 0, delta: '{}' }),
      e('response.output_item.done', { output_index: 0, item: { ...a, arguments: '{}' } }),
    ];
    const gate = new ToolGate(rules);
    const got = sseFrames(await relay(frames, new ResponsesToolFilter(gate), '')).map((f) => frameData(f)!);
    expect(got.map((d) => d.sequence_number)).toEqual(got.map((_, i) => i));
    expect(got.map((d) => [d.type, d.output_index])).toEqual([
      ['response.output_item.added', 1],
      ['response.content_part.added', 1],
      ['response.output_text.delta', 1],
      ['response.output_text.done', 1],
      ['response.content_part.done', 1],
      ['response.output_item.done', 1],
      ['response.output_item.added', 0],
      ['response.function_call_arguments.delta', 0],
      ['response.output_item.done', 0],
    ]);
    expect(got[3]!.text).toBe(refusal('deny_patch'));
    expect(gate.records.map((r) => [r.id, r.decision])).toEqual([
      ['call_b', 'denied'],
      ['call_a', 'allowed'],
    ]);
  });
});

describe('the call view of a Responses call item', () => {
  it('reads function calls by name, custom tools by their one string, built-in calls by kind and MCP calls by server', () => {
    expect(responsesCallView({ type: 'function_call', name: 'exec_command', arguments: '{"cmd":"ls"}' })).toEqual({ name: 'exec_command', input: { cmd: 'ls' }, text: '{"cmd":"ls"}' });
    expect(responsesCallView({ type: 'function_call', name: 'f', arguments: '{oops' })).toEqual({ name: 'f', input: undefined, text: '{oops' });
    expect(responsesCallView({ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch' })).toEqual({ name: 'apply_patch', input: '*** Begin Patch', text: '*** Begin Patch' });
    expect(responsesCallView({ type: 'local_shell_call', action: { type: 'exec', command: ['rm', '-rf', 'x'] } })).toEqual({
      name: 'local_shell',
      input: { type: 'exec', command: ['rm', '-rf', 'x'] },
      text: '{"type":"exec","command":["rm","-rf","x"]}',
    });
    expect(responsesCallView({ type: 'shell_call', action: { commands: ['ls'] } }).name).toBe('shell');
    expect(responsesCallView({ type: 'apply_patch_call', operation: { type: 'update_file', path: 'a' } }).input).toEqual({ type: 'update_file', path: 'a' });
    expect(responsesCallView({ type: 'computer_call', action: { type: 'click' } }).name).toBe('computer');
    expect(responsesCallView({ type: 'web_search_call', action: { query: 'q' } }).name).toBe('web_search');
    expect(responsesCallView({ type: 'mcp_call', server_label: 'github', name: 'create_issue', arguments: '{}' })).toEqual({ name: 'mcp/github/create_issue', input: {}, text: '{}' });
  });
});

describe('offered tools', () => {
  it('leaves out the tools denied outright, and a tool_choice naming one', () => {
    const chat = { model: 'm', tools: [{ type: 'function', function: { name: 'forbidden' } }], tool_choice: { type: 'function', function: { name: 'forbidden' } }, parallel_tool_calls: true, web_search_options: {} };
    expect(withoutDeniedTools(chat, rules, 'chat')).toEqual({ model: 'm', web_search_options: {} });
    expect(chat.tools).toHaveLength(1);
    const messages = { model: 'm', tools: [{ name: 'forbidden', input_schema: {} }, { name: 'read', input_schema: {} }] };
    expect(withoutDeniedTools(messages, rules, 'messages')).toEqual({ model: 'm', tools: [{ name: 'read', input_schema: {} }] });
    const same = { model: 'm', tools: [{ type: 'web_search' }] };
    expect(withoutDeniedTools(same, rules, 'responses')).toBe(same);
  });

  it('knows a provider-side Responses tool without a call kind by its type, so a deny of it turns it off', () => {
    const denyHosted: ToolRules = { ...rules, deniesOutright: (name) => name === 'code_interpreter' };
    const body = { model: 'm', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }, { type: 'function', name: 'read' }] };
    expect(withoutDeniedTools(body, denyHosted, 'responses')).toEqual({ model: 'm', tools: [{ type: 'function', name: 'read' }] });
  });
});

describe('responses: a call item in a frame the fast path or JSON.parse cannot read', () => {
  const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'deny_exec', arguments: '' };
  const done = { ...call, arguments: '{}', status: 'completed' };
  /** The call's name, as a client would read it from what was sent (a lenient parser: NaN is a number to it). */
  const sentCalls = (out: string) =>
    sseFrames(out)
      .map((f) => JSON.parse(f.split('\n').find((l) => l.startsWith('data:'))!.slice(5).replaceAll('NaN', 'null')) as { item?: { type?: string; name?: string } })
      .filter((d) => d.item?.type === 'function_call')
      .map((d) => d.item!.name);

  it('a type written with \\u escapes is read as the client reads it, in the first event and later ones', async () => {
    const escaped = (seq: number, type: string, o: Record<string, unknown>) =>
      `event: ${type}\ndata: ${JSON.stringify({ type: 'response.in_progress', sequence_number: seq, ...o }).replace(`"sequence_number":${seq}`, `"sequence_number":${seq},"type":"${type.replace('.added', '\\u002eadded').replace('.done', '\\u002edone')}"`)}\n\n`;
    for (const before of [[], [ev('response.created', { sequence_number: 0, response: { id: 'r' } })]]) {
      const n = before.length;
      const frames = [...before, escaped(n, 'response.output_item.added', { output_index: 0, item: call }), escaped(n + 1, 'response.output_item.done', { output_index: 0, item: done })];
      const out = await relay(frames, new ResponsesToolFilter(new ToolGate(rules)), '');
      expect(sentCalls(out)).toEqual([]);
      expect(out).toContain(refusal('deny_exec'));
    }
  });

  it('an event that is not valid JSON fails the stream instead of passing unread', async () => {
    const bad = (type: string, o: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o, pad: 'x'.repeat(5000) }).replace('"pad"', '"n":NaN,"pad"')}\n\n`;
    const frames = [ev('response.created', { sequence_number: 0, response: { id: 'r' } }), bad('response.output_item.added', { sequence_number: 1, output_index: 0, item: call }), bad('response.output_item.done', { sequence_number: 2, output_index: 0, item: done })];
    await expect(relay(frames, new ResponsesToolFilter(new ToolGate(rules)), '')).rejects.toMatchObject({ code: 'upstream_bad_response' });
  });
});

describe('responses: the first event read without parsing', () => {
  it('numbers on from the sequence_number JSON.parse reads, when the first event has two', async () => {
    const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'deny_exec', arguments: '' };
    const created = `event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"r","instructions":"${'i'.repeat(300)}"},"sequence_number":7}\n\n`;
    const frames = [
      created,
      ev('response.output_item.added', { sequence_number: 8, output_index: 0, item: call }),
      ev('response.output_item.done', { sequence_number: 9, output_index: 0, item: { ...call, arguments: '{}' } }),
    ];
    const last = ev('response.completed', { sequence_number: 10, response: { id: 'r', output: [call] } });
    const got = sseFrames(await relay(frames, new ResponsesToolFilter(new ToolGate(rules)), last)).map((f) => frameData(f)!);
    expect(got.map((d) => d.sequence_number)).toEqual([7, 8, 9, 10, 11, 12, 13, 14]);
  });
});
