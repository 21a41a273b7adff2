import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../contract/errors.js';
import type { OpenAIChatCompletion, OpenAIFinishReason, OpenAIToolCall } from '../providers/openai-format.js';
import type { Usage } from '../providers/spec.js';
import { chatCompletionToMessage } from './chat-to-messages-response.js';
import { mapChatFinishToStopReason } from './map-chat-finish-to-stop-reason.js';

const USAGE: Usage = { prompt_tokens: 100, completion_tokens: 20, cached_prompt_tokens: 60, estimated: false };

function completion(message: { content: string | null; tool_calls?: OpenAIToolCall[]; refusal?: string | null }, finish: OpenAIFinishReason | null = 'stop'): OpenAIChatCompletion {
  return {
    id: 'chatcmpl-abc123',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-x-2025',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  };
}

const call = (id: string, name: string, args: string): OpenAIToolCall => ({ id, type: 'function', function: { name, arguments: args } });

describe('chatCompletionToMessage', () => {
  it('turns a text answer into a message', () => {
    expect(chatCompletionToMessage(completion({ content: 'Hello!' }), { model: 'claude-sonnet-4', usage: USAGE })).toEqual({
      id: 'msg_abc123',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4',
      content: [{ type: 'text', text: 'Hello!' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 40, output_tokens: 20, cache_read_input_tokens: 60, cache_creation_input_tokens: 0 },
    });
  });

  it('turns tool calls into tool_use blocks after the text', () => {
    const out = chatCompletionToMessage(
      completion({ content: 'Reading both.', tool_calls: [call('call_1', 'read', '{"path":"a.ts"}'), call('call_2', 'ls', '')] }, 'tool_calls'),
      { model: 'm', usage: USAGE },
    );
    expect(out.content).toEqual([
      { type: 'text', text: 'Reading both.' },
      { type: 'tool_use', id: 'call_1', name: 'read', input: { path: 'a.ts' } },
      { type: 'tool_use', id: 'call_2', name: 'ls', input: {} },
    ]);
    expect(out.stop_reason).toBe('tool_use');
  });

  it('leaves out empty text, and says tool_use when the upstream said stop after tool calls', () => {
    const out = chatCompletionToMessage(completion({ content: '', tool_calls: [call('c', 'f', '{}')] }, 'stop'), { model: 'm', usage: USAGE });
    expect(out.content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input: {} }]);
    expect(out.stop_reason).toBe('tool_use');
    expect(chatCompletionToMessage(completion({ content: null }), { model: 'm', usage: USAGE }).content).toEqual([]);
  });

  it('turns a refusal into text', () => {
    const out = chatCompletionToMessage(completion({ content: null, refusal: 'I cannot help with that.' }, 'content_filter'), { model: 'm', usage: USAGE });
    expect(out.content).toEqual([{ type: 'text', text: 'I cannot help with that.' }]);
    expect(out.stop_reason).toBe('refusal');
  });

  it('reports cache writes apart from input tokens', () => {
    const usage: Usage = { prompt_tokens: 1000, completion_tokens: 5, cached_prompt_tokens: 200, cache_write_prompt_tokens: 300, estimated: false };
    expect(chatCompletionToMessage(completion({ content: 'x' }), { model: 'm', usage }).usage).toEqual({
      input_tokens: 500, output_tokens: 5, cache_read_input_tokens: 200, cache_creation_input_tokens: 300,
    });
    expect(chatCompletionToMessage(completion({ content: 'x' }), { model: 'm', usage: { prompt_tokens: 7, completion_tokens: 1, estimated: true } }).usage).toEqual({
      input_tokens: 7, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0,
    });
  });

  it('keeps an id without the chatcmpl- prefix, and makes one when the upstream sent none', () => {
    const c = completion({ content: 'x' });
    expect(chatCompletionToMessage({ ...c, id: 'gen-42' }, { model: 'm', usage: USAGE }).id).toBe('msg_gen-42');
    expect(chatCompletionToMessage({ ...c, id: '' }, { model: 'm', usage: USAGE }).id).toBe('msg_1700000000');
  });

  it.each([
    ['not JSON', '{"path": "a.ts"'],
    ['an array', '[1, 2]'],
    ['null', 'null'],
  ])('fails as a bad upstream answer when tool arguments are %s', (_, args) => {
    const run = () => chatCompletionToMessage(completion({ content: null, tool_calls: [call('c', 'read', args)] }, 'tool_calls'), { model: 'm', usage: USAGE });
    expect(run).toThrow(AgentgwError);
    try {
      run();
    } catch (e) {
      expect((e as AgentgwError).code).toBe('upstream_bad_response');
      expect((e as AgentgwError).message).toContain('"read"');
    }
  });

  it('fails as a bad upstream answer without a choice', () => {
    const c = completion({ content: 'x' });
    expect(() => chatCompletionToMessage({ ...c, choices: [] }, { model: 'm', usage: USAGE })).toThrow(/without a choice/);
  });
});

describe('mapChatFinishToStopReason', () => {
  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['content_filter', 'refusal'],
    [null, 'end_turn'],
    [undefined, 'end_turn'],
    ['something_new', 'end_turn'],
  ])('maps %s to %s', (finish, stop) => {
    expect(mapChatFinishToStopReason(finish)).toBe(stop);
  });

  it('says tool_use for a normal end after tool calls, but keeps max_tokens', () => {
    expect(mapChatFinishToStopReason('stop', true)).toBe('tool_use');
    expect(mapChatFinishToStopReason(null, true)).toBe('tool_use');
    expect(mapChatFinishToStopReason('length', true)).toBe('max_tokens');
  });
});
