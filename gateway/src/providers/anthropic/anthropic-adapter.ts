// Anthropic Messages API: x-api-key and anthropic-version headers, OpenAI requests translated both ways.
import { withMembers } from '../../json/received-json.js';
import { AgentgwError } from '../../contract/errors.js';
import type { AnthropicProviderConfig } from '../config.js';
import type { OpenAIChatRequest, OpenAIFinishReason } from '../openai-format.js';
import { createChatStream } from '../shared/chat-stream.js';
import { estimatePromptTokens } from '../shared/count-tokens.js';
import { providerIdentity, type ProviderIdentity } from '../shared/provider-identity.js';
import { StreamMeter } from '../shared/stream-meter.js';
import { UpstreamClient } from '../shared/upstream-client.js';
import { badUpstreamResponse } from '../shared/upstream-failure.js';
import type { CallContext, ChatResult, ChatStream, EmbeddingsResult, MessagesCallContext, MessagesResult, NativeMessages, ProviderAdapter } from '../spec.js';
import { AnthropicPassthroughFrames, anthropicDeltaText } from './anthropic-passthrough-frames.js';
import { nativeMessageUsage } from './native-message-usage.js';
import type { AnthropicResponse } from './anthropic-api.js';
import { anthropicStreamFrames } from './anthropic-stream-frames.js';
import { convertAnthropicResponse } from './convert-anthropic-response.js';
import { convertToAnthropicRequest } from './convert-to-anthropic-request.js';
import { stringifyBody } from '../../json/stringify.js';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
export const ANTHROPIC_VERSION = '2023-06-01';
const DEFAULT_MAX_TOKENS = 4096;

export class AnthropicAdapter implements ProviderAdapter {
  readonly type = 'anthropic' as const;
  readonly baseUrl: string;
  readonly models: readonly string[];
  readonly configured: boolean;
  readonly supportsEmbeddings = false;
  private readonly identity: ProviderIdentity;
  private readonly client: UpstreamClient;
  private readonly headers: Record<string, string>;

  constructor(readonly name: string, private readonly config: AnthropicProviderConfig) {
    this.identity = providerIdentity(name, config.type, [config.api_key]);
    this.client = new UpstreamClient(this.identity, config.base_url ?? ANTHROPIC_BASE_URL, config);
    this.baseUrl = this.client.baseUrl;
    this.models = config.models ?? [];
    this.configured = Boolean(config.api_key);
    this.headers = {
      ...config.headers,
      'content-type': 'application/json',
      'anthropic-version': config.api_version ?? ANTHROPIC_VERSION,
      ...(config.api_key ? { 'x-api-key': config.api_key } : {}),
    };
  }

  async chat(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatResult> {
    const request = this.request(ctx, body, false);
    const response = await this.client.sendJson<AnthropicResponse>({ path: '/messages', headers: this.headers, body: request, signal: ctx.signal });
    if (!Array.isArray(response.content) || !response.usage) throw badUpstreamResponse(this.identity, 'answered with a message that has no content or usage.');
    return convertAnthropicResponse(response, ctx.requestId);
  }

  async chatStream(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatStream> {
    const request = this.request(ctx, body, true);
    const response = await this.client.send({ path: '/messages', headers: this.headers, body: request, signal: ctx.signal });
    const meter = new StreamMeter(() => estimatePromptTokens(body));
    const state = { finishReason: null as OpenAIFinishReason | null };
    return createChatStream({
      identity: this.identity,
      response,
      signal: ctx.signal,
      meter,
      finishReason: () => state.finishReason,
      frames: anthropicStreamFrames({
        identity: this.identity,
        body: response.body,
        meter,
        model: ctx.model,
        requestId: ctx.requestId,
        includeUsage: ctx.includeUsage ?? body.stream_options?.include_usage === true,
        state,
      }),
    });
  }

  /** Messages requests go as the client wrote them, answers come back as sent. */
  readonly messages: NativeMessages = {
    serves: () => true,
    create: async (ctx: MessagesCallContext, body: Record<string, unknown>): Promise<MessagesResult> => {
      const { value, text } = await this.client.sendJsonText<AnthropicResponse>(this.native(ctx, '/messages', body));
      return { text, usage: nativeMessageUsage(this.identity, value, ctx) };
    },
    stream: async (ctx: MessagesCallContext, body: Record<string, unknown>): Promise<ChatStream> => {
      const meter = new StreamMeter(ctx.estimatePromptTokens, anthropicDeltaText);
      return this.client.openFrames(this.native(ctx, '/messages', body), { meter, translator: new AnthropicPassthroughFrames(this.identity, meter) });
    },
    countTokens: async (ctx: MessagesCallContext, body: Record<string, unknown>): Promise<string> => {
      return (await this.client.sendJsonText<{ input_tokens: number }>(this.native(ctx, '/messages/count_tokens', body))).text;
    },
  };

  private native(ctx: MessagesCallContext, path: string, body: Record<string, unknown>) {
    if (!this.configured) throw new AgentgwError('upstream_bad_response', `Provider "${this.name}" has no api_key configured; set it in the gateway configuration.`);
    // The client's body as sent, with the upstream's model id.
    return { path: path + ctx.query, headers: { ...this.headers, ...ctx.clientHeaders }, body: withMembers(body, { model: ctx.model }), signal: ctx.signal };
  }

  async embeddings(): Promise<EmbeddingsResult> {
    throw new AgentgwError('validation_failed', `Provider "${this.name}" (anthropic) offers no embeddings; use a model of a provider that does.`, { param: 'model' });
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private request(ctx: CallContext, body: OpenAIChatRequest, stream: boolean): Buffer {
    if (!this.configured) throw new AgentgwError('upstream_bad_response', `Provider "${this.name}" has no api_key configured; set it in the gateway configuration.`);
    return stringifyBody(convertToAnthropicRequest(this.name, ctx.model, body, this.config.default_max_tokens ?? DEFAULT_MAX_TOKENS, stream, this.config.prompt_caching));
  }
}

export function createAnthropicAdapter(name: string, config: AnthropicProviderConfig): AnthropicAdapter {
  return new AnthropicAdapter(name, config);
}
