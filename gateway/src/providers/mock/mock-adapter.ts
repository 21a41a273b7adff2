// An offline provider with deterministic answers and real token counts, so the gateway can be tried and tested without keys.
import type { MockProviderConfig } from '../config.js';
import type { OpenAIChatCompletion, OpenAIChatRequest, OpenAIEmbeddingsRequest, OpenAIFinishReason } from '../openai-format.js';
import { createChatStream } from '../shared/chat-stream.js';
import { ChunkWriter } from '../shared/chunk-writer.js';
import { countTokens, estimateEmbeddingTokens, estimatePromptTokens } from '../shared/count-tokens.js';
import { encodeEmbedding } from '../shared/embedding-encoding.js';
import { embeddingTexts } from '../shared/embeddings-input.js';
import { toOpenAIUsage } from '../shared/openai-usage.js';
import { providerIdentity, type ProviderIdentity } from '../shared/provider-identity.js';
import { StreamMeter } from '../shared/stream-meter.js';
import { upstreamStatusError } from '../shared/upstream-status-error.js';
import type { CallContext, ChatResult, ChatStream, EmbeddingsResult, ProviderAdapter, Usage } from '../spec.js';
import { mockEmbedding } from './mock-embedding.js';
import { mockReply, splitIntoChunks, type MockReply } from './mock-reply.js';

export const MOCK_MODELS = ['mock-1', 'mock-embed-1'];
const DEFAULT_DIMENSIONS = 256;
// Model ids like "error-429" fail as an upstream answering that status would, to exercise fallbacks offline.
const SIMULATED_ERROR = /^error-([1-5]\d\d)$/;

export class MockAdapter implements ProviderAdapter {
  readonly type = 'mock' as const;
  readonly baseUrl = null;
  readonly models: readonly string[];
  readonly configured = true;
  readonly supportsEmbeddings = true;
  private readonly identity: ProviderIdentity;

  constructor(readonly name: string, private readonly config: MockProviderConfig) {
    this.identity = providerIdentity(name, config.type, []);
    this.models = config.models ?? MOCK_MODELS;
  }

  async chat(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatResult> {
    this.begin(ctx);
    const reply = mockReply(body);
    const usage = replyUsage(body, reply);
    const completion: OpenAIChatCompletion = {
      id: `chatcmpl-${ctx.requestId}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: ctx.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: reply.content, ...(reply.toolCalls.length ? { tool_calls: reply.toolCalls } : {}) },
          finish_reason: reply.finishReason,
          logprobs: null,
        },
      ],
      usage: toOpenAIUsage(usage),
    };
    return { body: completion, usage };
  }

  async chatStream(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatStream> {
    this.begin(ctx);
    const reply = mockReply(body);
    const meter = new StreamMeter(() => estimatePromptTokens(body));
    const state = { finishReason: null as OpenAIFinishReason | null };
    const includeUsage = ctx.includeUsage ?? body.stream_options?.include_usage === true;
    return createChatStream({
      identity: this.identity,
      response: null,
      signal: ctx.signal,
      meter,
      finishReason: () => state.finishReason,
      frames: mockFrames(ctx, body, reply, meter, includeUsage, state),
    });
  }

  async embeddings(ctx: CallContext, body: OpenAIEmbeddingsRequest): Promise<EmbeddingsResult> {
    this.begin(ctx);
    const texts = embeddingTexts(this.name, body.input);
    const dimensions = body.dimensions ?? this.config.embedding_dimensions ?? DEFAULT_DIMENSIONS;
    const tokens = estimateEmbeddingTokens(body.input);
    return {
      body: {
        object: 'list',
        data: texts.map((text, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(mockEmbedding(text, dimensions), body.encoding_format) })),
        model: ctx.model,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      },
      usage: { prompt_tokens: tokens, completion_tokens: 0, estimated: false },
    };
  }

  async close(): Promise<void> {}

  private begin(ctx: CallContext): void {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const simulated = SIMULATED_ERROR.exec(ctx.model);
    if (simulated) {
      throw upstreamStatusError(this.identity, Number(simulated[1]), JSON.stringify({ error: { message: `Simulated failure for model ${ctx.model}.` } }));
    }
  }
}

function replyUsage(body: OpenAIChatRequest, reply: MockReply): Usage {
  let text = reply.content ?? '';
  for (const call of reply.toolCalls) text += call.function.name + call.function.arguments;
  return { prompt_tokens: estimatePromptTokens(body), completion_tokens: countTokens(text), estimated: false };
}

async function* mockFrames(
  ctx: CallContext,
  body: OpenAIChatRequest,
  reply: MockReply,
  meter: StreamMeter,
  includeUsage: boolean,
  state: { finishReason: OpenAIFinishReason | null },
): AsyncGenerator<string> {
  const writer = new ChunkWriter(`chatcmpl-${ctx.requestId}`, ctx.model, meter);
  const frames: Array<() => string> = [() => writer.role()];
  for (const piece of reply.content ? splitIntoChunks(reply.content) : []) frames.push(() => writer.text(piece));
  reply.toolCalls.forEach((call, index) => {
    const args = call.function.arguments;
    const half = Math.ceil(args.length / 2);
    frames.push(() => writer.toolCallStart(index, call.id, call.function.name));
    frames.push(() => writer.toolCallArguments(index, args.slice(0, half)));
    if (args.length > half) frames.push(() => writer.toolCallArguments(index, args.slice(half)));
  });
  for (const frame of frames) {
    if (ctx.signal.aborted) return;
    yield frame();
    // Let the consumer act (and abort) between chunks, as with a real upstream.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (ctx.signal.aborted) return;
  meter.report(replyUsage(body, reply));
  state.finishReason = reply.finishReason;
  yield writer.finished(reply.finishReason);
  if (includeUsage) yield writer.usage(toOpenAIUsage(meter.usage()));
}

export function createMockAdapter(name: string, config: MockProviderConfig): MockAdapter {
  return new MockAdapter(name, config);
}
