// Gemini API: x-goog-api-key header, generateContent / streamGenerateContent?alt=sse, embedContent / batchEmbedContents.
import { AgentgwError } from '../../contract/errors.js';
import type { GeminiProviderConfig } from '../config.js';
import type { OpenAIChatRequest, OpenAIEmbeddingsRequest, OpenAIFinishReason } from '../openai-format.js';
import { createChatStream } from '../shared/chat-stream.js';
import { countTokens, estimateEmbeddingTokens, estimatePromptTokens } from '../shared/count-tokens.js';
import { embeddingTexts } from '../shared/embeddings-input.js';
import { contentText } from '../shared/message-content.js';
import { toOpenAIUsage } from '../shared/openai-usage.js';
import { providerIdentity, type ProviderIdentity } from '../shared/provider-identity.js';
import { StreamMeter } from '../shared/stream-meter.js';
import { UpstreamClient } from '../shared/upstream-client.js';
import { badUpstreamResponse } from '../shared/upstream-failure.js';
import type { CallContext, ChatResult, ChatStream, EmbeddingsResult, GeminiCallContext, GeminiResult, NativeGemini, ProviderAdapter } from '../spec.js';
import { convertGeminiResponse } from './convert-gemini-response.js';
import { geminiEmbeddingsRequest, geminiEmbeddingVectors, toOpenAIEmbeddings } from './convert-to-gemini-embeddings.js';
import { convertToGeminiRequest } from './convert-to-gemini-request.js';
import type { GeminiResponse } from './gemini-api.js';
import { geminiModelPath } from './gemini-model-path.js';
import { geminiStreamFrames } from './gemini-stream-frames.js';
import { GeminiPassthroughFrames, geminiFrameText, nativeGeminiBody, nativeGeminiUsage } from './gemini-native.js';

export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

export class GeminiAdapter implements ProviderAdapter {
  readonly type = 'gemini' as const;
  readonly baseUrl: string;
  readonly models: readonly string[];
  readonly configured: boolean;
  readonly supportsEmbeddings = true;
  private readonly identity: ProviderIdentity;
  private readonly client: UpstreamClient;
  private readonly headers: Record<string, string>;

  constructor(readonly name: string, config: GeminiProviderConfig) {
    this.identity = providerIdentity(name, config.type, [config.api_key]);
    this.client = new UpstreamClient(this.identity, config.base_url ?? GEMINI_BASE_URL, config);
    this.baseUrl = this.client.baseUrl;
    this.models = config.models ?? [];
    this.configured = Boolean(config.api_key);
    this.headers = { ...config.headers, 'content-type': 'application/json', ...(config.api_key ? { 'x-goog-api-key': config.api_key } : {}) };
  }

  async chat(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatResult> {
    this.requireKey();
    const response = await this.client.sendJson<GeminiResponse>({
      path: geminiModelPath(ctx.model, 'generateContent'),
      headers: this.headers,
      body: JSON.stringify(convertToGeminiRequest(this.name, body, ctx.model)),
      signal: ctx.signal,
    });
    if (!Array.isArray(response.candidates) && !response.promptFeedback) throw badUpstreamResponse(this.identity, 'answered without candidates.');
    const result = convertGeminiResponse(response, ctx.model, ctx.requestId);
    if (!response.usageMetadata) {
      // No usage reported: count what was sent and received.
      let text = '';
      for (const choice of result.body.choices) {
        text += contentText(choice.message.content);
        for (const call of choice.message.tool_calls ?? []) text += call.function.name + call.function.arguments;
      }
      result.usage = { prompt_tokens: estimatePromptTokens(body), completion_tokens: countTokens(text), estimated: true };
      result.body.usage = toOpenAIUsage(result.usage);
    }
    return result;
  }

  async chatStream(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatStream> {
    this.requireKey();
    if (body.n != null && body.n > 1) {
      throw new AgentgwError('validation_failed', `Provider "${this.name}" streams one choice; send n = 1 or stream = false.`, { param: 'n' });
    }
    const response = await this.client.send({
      path: `${geminiModelPath(ctx.model, 'streamGenerateContent')}?alt=sse`,
      headers: this.headers,
      body: JSON.stringify(convertToGeminiRequest(this.name, body, ctx.model)),
      signal: ctx.signal,
    });
    const meter = new StreamMeter(() => estimatePromptTokens(body));
    const state = { finishReason: null as OpenAIFinishReason | null };
    return createChatStream({
      identity: this.identity,
      response,
      signal: ctx.signal,
      meter,
      finishReason: () => state.finishReason,
      frames: geminiStreamFrames({
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

  /** Gemini requests go as the client wrote them (the target's model in the path), answers come back as sent. */
  readonly gemini: NativeGemini = {
    generate: async (ctx: GeminiCallContext, body: Record<string, unknown>): Promise<GeminiResult> => {
      const { value, text } = await this.client.sendJsonText<GeminiResponse>(this.native(ctx, 'generateContent', body));
      return { text, value: value as Record<string, unknown>, usage: nativeGeminiUsage(this.identity, value, ctx) };
    },
    stream: async (ctx: GeminiCallContext, body: Record<string, unknown>): Promise<ChatStream> => {
      const meter = new StreamMeter(ctx.estimatePromptTokens, geminiFrameText);
      const req = this.native(ctx, 'streamGenerateContent', body);
      return this.client.openFrames({ ...req, path: `${req.path}?alt=sse` }, { meter, translator: new GeminiPassthroughFrames(this.identity, meter) });
    },
    countTokens: async (ctx: GeminiCallContext, body: Record<string, unknown>): Promise<string> => {
      return (await this.client.sendJsonText<{ totalTokens?: number }>(this.native(ctx, 'countTokens', body))).text;
    },
  };

  private native(ctx: GeminiCallContext, method: string, body: Record<string, unknown>) {
    this.requireKey();
    return { path: geminiModelPath(ctx.model, method), headers: this.headers, body: nativeGeminiBody(body), signal: ctx.signal };
  }

  async embeddings(ctx: CallContext, body: OpenAIEmbeddingsRequest): Promise<EmbeddingsResult> {
    this.requireKey();
    const texts = embeddingTexts(this.name, body.input);
    const request = geminiEmbeddingsRequest(ctx.model, texts, body);
    const json = await this.client.sendJson<Record<string, unknown>>({ path: request.path, headers: this.headers, body: JSON.stringify(request.body), signal: ctx.signal });
    const vectors = geminiEmbeddingVectors(json);
    if (!vectors || vectors.length !== texts.length) throw badUpstreamResponse(this.identity, 'answered without one embedding per input.');
    // The Gemini API reports no token counts for embeddings.
    const promptTokens = estimateEmbeddingTokens(body.input);
    return { body: toOpenAIEmbeddings(ctx.model, vectors, body, promptTokens), usage: { prompt_tokens: promptTokens, completion_tokens: 0, estimated: true } };
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private requireKey(): void {
    if (!this.configured) throw new AgentgwError('upstream_bad_response', `Provider "${this.name}" has no api_key configured; set it in the gateway configuration.`);
  }
}

export function createGeminiAdapter(name: string, config: GeminiProviderConfig): GeminiAdapter {
  return new GeminiAdapter(name, config);
}
