// Claude's thinking carried through Responses and Chat Completions: reasoning items made from thinking (plain and
// streamed) hold the signed blocks in encrypted_content; given back, they reach a Claude target as thinking_blocks before
// the message or calls they led to, and no other target; OpenAI's own encrypted reasoning never becomes thinking blocks.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../contract/errors.js';
import type { OpenAIChatCompletion, OpenAIChatCompletionChunk, OpenAIFinishReason } from '../providers/openai-format.js';
import { expectOpenResponsesObject, expectOpenResponsesStream } from '../data-plane/dialects/responses/__fixtures__/open-responses-schema.js';
import { parseEvents, wellFormedOutput } from '../data-plane/dialects/responses/__fixtures__/responses-stream-checks.js';
import { decodeThinkingBlocks, encodeThinkingBlocks, isCarriedThinking, type ThinkingBlock } from './carried-thinking.js';
import { ResponsesStreamEncoder } from './chat-stream-to-responses-events.js';
import { chatCompletionToResponse } from './chat-to-responses-response.js';
import type { ResponsesRequest } from './responses-api.js';
import { responsesToChatRequest } from './responses-to-chat-request.js';

const USAGE = { prompt_tokens: 10, completion_tokens: 20, estimated: false };
const SIGNED: ThinkingBlock = { type: 'thinking', thinking: 'The user wants the weather; call get_weather.', signature: 'EqQBCgIYAhIMsig1' };
const REDACTED: ThinkingBlock = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT' };
const OPTS = { id: 'resp_t', model: 'claude', createdAt: 1700000000, request: {} };

const chunk = (delta: Record<string, unknown>, finish: OpenAIFinishReason | null = null): string =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'claude', choices: [{ index: 0, delta, finish_reason: finish }] } satisfies OpenAIChatCompletionChunk)}\n\n`;

const sdk = (sse: string) =>
  new OpenAI({ apiKey: 'k', baseURL: 'http://gateway.invalid/v1', fetch: async () => new Response(sse, { headers: { 'content-type': 'text/event-stream' } }) });

describe('carried thinking', () => {
  it('round-trips blocks through encrypted_content, and tells agentgw\'s from anyone else\'s', () => {
    const encrypted = encodeThinkingBlocks([SIGNED, REDACTED]);
    expect(isCarriedThinking(encrypted)).toBe(true);
    expect(decodeThinkingBlocks(encrypted, 'x')).toEqual([SIGNED, REDACTED]);
    expect(isCarriedThinking('gAAAAABoOpenAIFernetToken')).toBe(false);
    expect(decodeThinkingBlocks('gAAAAABoOpenAIFernetToken', 'x')).toBeNull();
  });

  it('a completion with thinking -> a reasoning item with its summary and its blocks', () => {
    const completion: OpenAIChatCompletion = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'claude',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Checking.', reasoning_content: SIGNED.thinking, thinking_blocks: [SIGNED, REDACTED] }, finish_reason: 'stop' }],
    };
    const r = chatCompletionToResponse(completion, { ...OPTS, usage: USAGE });
    expect(r.output[0]).toEqual({ type: 'reasoning', id: 'rs_t_0', summary: [{ type: 'summary_text', text: SIGNED.thinking }], encrypted_content: encodeThinkingBlocks([SIGNED, REDACTED]) });
    expect(expectOpenResponsesObject(r)).toEqual({});
  });

  it('streamed: the text of each block is what came before its signature; a redacted block alone makes an item without summary', async () => {
    const encoder = new ResponsesStreamEncoder(OPTS);
    let sse = encoder.frames(
      chunk({ reasoning_content: 'First ' }) +
        chunk({ reasoning_content: 'block.' }) +
        chunk({ thinking_blocks: [{ type: 'thinking', signature: 'sig-1' }] }) +
        chunk({ reasoning_content: 'Second.' }) +
        chunk({ thinking_blocks: [{ type: 'thinking', signature: 'sig-2' }] }) +
        chunk({ content: 'Done.' }) +
        chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: REDACTED.data }] }) +
        chunk({}, 'stop'),
    );
    sse += encoder.finish(USAGE);
    const events = parseEvents(sse);
    const items = wellFormedOutput(events);
    expect(expectOpenResponsesStream(events.map((e) => e.data))).toEqual({});
    expect(items.map((i) => i.type)).toEqual(['reasoning', 'message', 'reasoning']);
    const done = events.filter((e) => e.event === 'response.output_item.done').map((e) => e.data.item);
    expect(done[0].summary).toEqual([{ type: 'summary_text', text: 'First block.Second.' }]);
    expect(decodeThinkingBlocks(done[0].encrypted_content, 'x')).toEqual([
      { type: 'thinking', thinking: 'First block.', signature: 'sig-1' },
      { type: 'thinking', thinking: 'Second.', signature: 'sig-2' },
    ]);
    expect(done[2]).toEqual({ id: 'rs_t_2', type: 'reasoning', summary: [], encrypted_content: encodeThinkingBlocks([REDACTED]) });
    const final = await sdk(sse).responses.stream({ model: 'claude', input: 'hi' }).finalResponse();
    expect(final.output[0]).toMatchObject({ type: 'reasoning', encrypted_content: done[0].encrypted_content });
    expect(final.output_text).toBe('Done.');
  });

  it('given back: Claude gets the blocks before the message and calls they led to; other targets and OpenAI\'s reasoning get none', () => {
    const input = [
      { type: 'message', role: 'user', content: 'Weather?' },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: SIGNED.thinking }], encrypted_content: encodeThinkingBlocks([SIGNED]) },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: '18C' },
      { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'gAAAAABoOpenAIFernetToken' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It is 18C.' }] },
    ];
    const body = { model: 'claude', input } as ResponsesRequest;
    const claude = responsesToChatRequest(body, { model: 'claude-sonnet-4-5', maxTokensField: 'max_tokens', reasons: true, carryThinking: true }).request;
    expect(claude.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(claude.messages[1]).toMatchObject({ role: 'assistant', content: 'Checking.', thinking_blocks: [SIGNED], tool_calls: [{ id: 'call_1' }] });
    expect(claude.messages[3]).not.toHaveProperty('thinking_blocks');
    const other = responsesToChatRequest(body, { model: 'gpt-4o', maxTokensField: 'max_tokens', reasons: false }).request;
    expect(JSON.stringify(other)).not.toContain('thinking_blocks');
    expect(JSON.stringify(other)).not.toContain(SIGNED.signature);
  });

  it('refuses, for Claude, agentgw-marked encrypted_content that holds no thinking blocks, naming the item', () => {
    const forged = `${encodeThinkingBlocks([]).slice(0, -4)}${Buffer.from('[{"type":"thinking"}]').toString('base64')}`;
    const body = { model: 'claude', input: [{ type: 'message', role: 'user', content: 'hi' }, { type: 'reasoning', summary: [], encrypted_content: forged }, { type: 'message', role: 'assistant', content: 'x' }, { type: 'message', role: 'user', content: 'again' }] } as ResponsesRequest;
    let error: unknown;
    try {
      responsesToChatRequest(body, { model: 'claude-sonnet-4-5', maxTokensField: 'max_tokens', reasons: true, carryThinking: true });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AgentgwError);
    expect(error).toMatchObject({ code: 'validation_failed', param: 'input.1.encrypted_content[0]' });
  });
});
