// Chat messages whose content is null or absent, which OpenAI refuses (400) and so must every translating adapter.
import { expect } from 'vitest';
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIChatRequest, ProviderAdapter } from '../spec.js';
import { ctx } from './fake-upstream.js';

/** An OpenAI tool call of the weather tool the adapter tests use. */
export function weatherCall(id: string, location: string) {
  return { id, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ location }) } };
}

/** [case, messages, the param of the 400, a part of its message]; `callId` is a tool call id in the provider's style. */
export function messagesWithoutContent(callId: string): Array<[string, object[], string, string]> {
  return [
    ['a null user content', [{ role: 'user', content: null }], 'messages[0].content', 'messages[0].content is null; a user message needs content'],
    ['an absent user content', [{ role: 'user' }], 'messages[0].content', 'messages[0].content is missing; a user message needs content'],
    ['a null user content before a good one', [{ role: 'user', content: null }, { role: 'user', content: 'a' }], 'messages[0].content', 'is null'],
    ['a null system content', [{ role: 'system', content: null }, { role: 'user', content: 'a' }], 'messages[0].content', 'a system message needs content'],
    ['an absent developer content', [{ role: 'user', content: 'a' }, { role: 'developer' }], 'messages[1].content', 'is missing; a developer message needs content'],
    [
      'a null tool content',
      [{ role: 'user', content: 'a' }, { role: 'assistant', content: null, tool_calls: [weatherCall(callId, 'Paris')] }, { role: 'tool', tool_call_id: callId, content: null }],
      'messages[2].content',
      'a tool message needs content',
    ],
    [
      'a null assistant content without tool_calls',
      [{ role: 'user', content: 'a' }, { role: 'assistant', content: null }, { role: 'user', content: 'b' }],
      'messages[1].content',
      'is null and the assistant message has no tool_calls',
    ],
    [
      'an absent assistant content with empty tool_calls',
      [{ role: 'user', content: 'a' }, { role: 'assistant', tool_calls: [] }, { role: 'user', content: 'b' }],
      'messages[1].content',
      'is missing and the assistant message has no tool_calls',
    ],
  ];
}

/** Asserts that the adapter refuses `messages` with a 400 on `param` whose message holds `sentence`, plain and streamed. */
export async function expectRefusedPlainAndStreamed(adapter: ProviderAdapter, model: string, messages: object[], param: string, sentence: string): Promise<void> {
  for (const stream of [false, true]) {
    // The request types require content where the gateway's schema does not.
    const body = { model: `x/${model}`, messages, ...(stream ? { stream } : {}) } as unknown as OpenAIChatRequest;
    const err = await (stream ? adapter.chatStream(ctx(model), body) : adapter.chat(ctx(model), body)).catch((e: unknown) => e);
    expect(err, `stream: ${stream}`).toBeInstanceOf(AgentgwError);
    expect(err, `stream: ${stream}`).toMatchObject({ code: 'validation_failed', status: 400, type: 'invalid_request_error', param });
    expect((err as Error).message).toContain(sentence);
  }
}
