// reasoning_effort -> Anthropic's extended thinking (a budget inside max_tokens, where the model and the request allow
// it), and Claude's thinking back as reasoning_content and signed thinking_blocks, plain and streamed, replaying the
// recorded thinking payloads; thinking_blocks given back go first in their assistant turn.
import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../../contract/errors.js';
import { adapterOnFakeUpstream, collectFrames, ctx, FakeUpstream, fixtureReader, jsonReply, parseFrames, sseEventsOf, streamReply } from '../__fixtures__/fake-upstream.js';
import { createProvider } from '../index.js';
import type { OpenAIChatRequest, ProviderAdapter } from '../spec.js';

const fixtures = fixtureReader(import.meta.url);
const THINKING_MESSAGE = fixtures.json('message-thinking-tool-use.json');
const THINKING_TEXT: string = THINKING_MESSAGE.content[0].thinking;
const SIGNATURE: string = THINKING_MESSAGE.content[0].signature;

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
};

const ask = (extra: Record<string, unknown> = {}): OpenAIChatRequest =>
  ({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: "What's the weather in San Francisco?" }], tools: [weatherTool], max_tokens: 16000, ...extra }) as OpenAIChatRequest;

describe('anthropic adapter: extended thinking', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('anthropic', { type: 'anthropic', base_url: `${url}/v1`, api_key: 'sk-ant-test' }),
    (u, a) => ((upstream = u), (adapter = a)),
  );

  it('sends reasoning_effort as a thinking budget and gives the thinking back as reasoning_content and signed thinking_blocks', async () => {
    upstream.respond(jsonReply(200, THINKING_MESSAGE));
    const result = await adapter.chat(ctx('claude-sonnet-4-5'), ask({ reasoning_effort: 'high', temperature: 0.2, top_p: 0.5 }));
    const sent = upstream.last.json();
    // high asks for 24576 tokens: three quarters of max_tokens (16000) at most, so that the answer keeps a quarter.
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 12000 });
    expect(sent.max_tokens).toBe(16000);
    // Anthropic refuses other sampling settings with thinking.
    expect(sent.temperature).toBeUndefined();
    expect(sent.top_p).toBeUndefined();
    const message = result.body.choices[0].message;
    expect(message.reasoning_content).toBe(THINKING_TEXT);
    expect(message.thinking_blocks).toEqual([{ type: 'thinking', thinking: THINKING_TEXT, signature: SIGNATURE }]);
    expect(message.content).toBe("I'll check the current weather in San Francisco.");
    expect(message.tool_calls).toEqual([{ id: 'toolu_01Thk7WeatherSF9q2LmN', type: 'function', function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' } }]);
  });

  it('maps each effort level to a budget that maps back to it, inside max_tokens', async () => {
    const cases: Array<[string, number, number | undefined]> = [
      ['minimal', 16000, 1024],
      ['low', 16000, 2048],
      ['medium', 16000, 8192],
      ['high', 64000, 24576],
      ['xhigh', 64000, 32768],
      ['high', 4096, 3072],
      // Not even Anthropic's minimum of 1024 fits in three quarters of 1200: no thinking.
      ['low', 1200, undefined],
      ['none', 16000, undefined],
    ];
    for (const [effort, max, budget] of cases) {
      upstream.respond(jsonReply(200, THINKING_MESSAGE));
      await adapter.chat(ctx('claude-sonnet-4-5'), ask({ reasoning_effort: effort, max_tokens: max }));
      expect(upstream.last.json().thinking, `${effort} in ${max}`).toEqual(budget === undefined ? undefined : { type: 'enabled', budget_tokens: budget });
    }
  });

  it('leaves thinking off where Claude cannot think for the request', async () => {
    const sent = async (model: string, extra: Record<string, unknown>) => {
      upstream.respond(jsonReply(200, THINKING_MESSAGE));
      await adapter.chat(ctx(model), ask({ reasoning_effort: 'medium', ...extra }));
      return upstream.last.json();
    };
    // A model without extended thinking.
    expect((await sent('claude-3-5-haiku-20241022', {})).thinking).toBeUndefined();
    // A required tool: Anthropic thinks only when the model may choose.
    expect((await sent('claude-sonnet-4-5', { tool_choice: 'required' })).thinking).toBeUndefined();
    // A tool call given back without the thinking that led to it (an answer of another family).
    const foreign = [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '18C' },
    ];
    expect((await sent('claude-sonnet-4-5', { messages: foreign })).thinking).toBeUndefined();
    // The same turn with Claude's signed thinking given back: thinking on, the thinking block first in the assistant turn.
    const own = [foreign[0], { ...foreign[1], thinking_blocks: [{ type: 'thinking', thinking: THINKING_TEXT, signature: SIGNATURE }] }, foreign[2]];
    const body = await sent('claude-sonnet-4-5', { messages: own });
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: THINKING_TEXT, signature: SIGNATURE },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { location: 'Paris' } },
      ],
    });
  });

  it('refuses an unknown effort and malformed thinking_blocks with a 400 naming the field', async () => {
    const refusal = async (body: OpenAIChatRequest) => {
      try {
        await adapter.chat(ctx('claude-sonnet-4-5'), body);
      } catch (e) {
        return e as AgentgwError;
      }
      throw new Error('expected a refusal');
    };
    const effort = await refusal(ask({ reasoning_effort: 'extreme' }));
    expect(effort).toBeInstanceOf(AgentgwError);
    expect(effort).toMatchObject({ code: 'validation_failed', param: 'reasoning_effort' });
    const blocks = await refusal(ask({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello', thinking_blocks: [{ type: 'thinking', thinking: 'no signature' }] }, { role: 'user', content: 'again' }] }));
    expect(blocks).toMatchObject({ code: 'validation_failed', param: 'messages[1].thinking_blocks[0]' });
    expect(upstream.requests).toHaveLength(0);
  });

  it('streams thinking as reasoning_content deltas, then the block signature, then the text', async () => {
    const sse = fixtures.text('message-stream-thinking.sse');
    upstream.respond(streamReply(sseEventsOf(sse)));
    const stream = await adapter.chatStream(ctx('claude-sonnet-4-5', { includeUsage: true }), { ...ask({ reasoning_effort: 'low' }), stream: true });
    const chunks = parseFrames(await collectFrames(stream));
    expect(upstream.last.json().thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const deltas = chunks.flatMap((c) => c.choices.map((ch: any) => ch.delta));
    const reasoning = deltas.filter((d) => d.reasoning_content !== undefined).map((d) => d.reasoning_content);
    const thinking = sse
      .split('\n')
      .filter((l) => l.includes('"thinking_delta"'))
      .map((l) => JSON.parse(l.slice(6)).delta.thinking)
      .join('');
    expect(reasoning.length).toBe(4);
    expect(reasoning.join('')).toBe(thinking);
    const signature = JSON.parse(sse.split('\n').find((l) => l.includes('"signature_delta"'))!.slice(6)).delta.signature;
    const blockAt = deltas.findIndex((d) => d.thinking_blocks);
    expect(deltas[blockAt].thinking_blocks).toEqual([{ type: 'thinking', signature }]);
    // The signature closes the thinking: it comes after the last reasoning delta and before the text.
    const lastReasoning = deltas.findLastIndex((d) => d.reasoning_content !== undefined);
    const firstText = deltas.findIndex((d) => d.content);
    expect(lastReasoning).toBeLessThan(blockAt);
    expect(blockAt).toBeLessThan(firstText);
    expect(deltas.filter((d) => d.content).map((d) => d.content).join('')).toBe('27 * 453 = 12,231.');
    expect(stream.usage()).toMatchObject({ prompt_tokens: 46, completion_tokens: 112, estimated: false });
  });
});
