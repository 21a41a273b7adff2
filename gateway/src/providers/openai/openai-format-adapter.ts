// The adapter for every upstream that speaks OpenAI's wire format (OpenAI, Azure OpenAI, OpenAI-compatible servers).
import { AgentgwError } from '../../contract/errors.js';
import type { ProviderType } from '../../contract/system.js';
import type {
  OpenAIChatCompletion,
  OpenAIChatRequest,
  OpenAIEmbeddingsRequest,
  OpenAIEmbeddingsResponse,
} from '../openai-format.js';
import { countTokens, estimateEmbeddingTokens, estimatePromptTokens } from '../shared/count-tokens.js';
import { contentText } from '../shared/message-content.js';
import { fromOpenAIUsage, toOpenAIUsage } from '../shared/openai-usage.js';
import { StreamMeter } from '../shared/stream-meter.js';
import { badUpstreamResponse } from '../shared/upstream-failure.js';
import type { UpstreamClient, UpstreamRequest } from '../shared/upstream-client.js';
import type {
  CallContext,
  ChatResult,
  ChatStream,
  EmbeddingsResult,
  NativeResponses,
  ProviderAdapter,
  ResponsesCallContext,
  ResponsesResult,
  ResponsesStream,
  Usage,
} from '../spec.js';
import { withMembers } from '../../json/received-json.js';
import { OpenAIResponsesFrames, responsesDeltaText, responsesFailure } from './openai-responses-frames.js';
import { responsesUsage } from './openai-responses-usage.js';
import { OpenAIFrameTranslator, openAIChunkText } from './openai-stream-frames.js';

/** Where an OpenAI-format upstream keeps its endpoints and how it authenticates. */
export interface OpenAIRoute {
  chatPath(model: string): string;
  embeddingsPath(model: string): string;
  /** Where the upstream serves OpenAI's Responses API; absent when it does not (requests are then translated to chat). */
  responsesPath?(model: string): string;
  /** The `model` of a Responses request body (Azure: the deployment name); the model itself when absent. */
  responsesModel?(model: string): string;
  headers: Record<string, string>;
}

export interface OpenAIFormatAdapterOptions {
  name: string;
  type: ProviderType;
  models: readonly string[];
  client: UpstreamClient;
  route: OpenAIRoute;
  /** Ask the upstream for usage in streams (stream_options.include_usage). */
  streamUsage: boolean;
  /** Sentence explaining what is missing when required credentials are absent; null when none are required. */
  missingCredentials: string | null;
}

export class OpenAIFormatAdapter implements ProviderAdapter {
  readonly name: string;
  readonly type: ProviderType;
  readonly baseUrl: string;
  readonly models: readonly string[];
  readonly configured: boolean;
  readonly supportsEmbeddings = true;
  /** Present when the route has a Responses path: requests go as the client wrote them, answers come back as sent. */
  readonly responses?: NativeResponses;

  constructor(private readonly options: OpenAIFormatAdapterOptions) {
    this.name = options.name;
    this.type = options.type;
    this.baseUrl = options.client.baseUrl;
    this.models = options.models;
    this.configured = options.missingCredentials === null;
    if (options.route.responsesPath) this.responses = { create: (ctx, body) => this.createResponse(ctx, body), stream: (ctx, body) => this.streamResponse(ctx, body) };
  }

  async chat(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatResult> {
    this.requireCredentials();
    const { client, route } = this.options;
    const { value: json, text } = await client.sendJsonText<OpenAIChatCompletion>({
      path: route.chatPath(ctx.model),
      headers: route.headers,
      body: withMembers(body, { model: ctx.model, stream: undefined, stream_options: undefined, ...withoutThinkingBlocks(body) }),
      signal: ctx.signal,
    });
    if (!Array.isArray(json.choices)) throw badUpstreamResponse(client.identity, 'answered without a choices array.');
    const reported = fromOpenAIUsage(json.usage);
    if (reported) return { body: json, usage: reported, raw: text };
    const usage = estimateChatUsage(body, json);
    json.usage = toOpenAIUsage(usage);
    return { body: json, usage };
  }

  async chatStream(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatStream> {
    this.requireCredentials();
    const { client, route, streamUsage } = this.options;
    const includeUsage = ctx.includeUsage ?? body.stream_options?.include_usage === true;
    const streamOptions = streamUsage ? { ...body.stream_options, include_usage: true } : body.stream_options ?? undefined;
    const meter = new StreamMeter(() => estimatePromptTokens(body), openAIChunkText);
    return client.openFrames(
      {
        path: route.chatPath(ctx.model),
        headers: route.headers,
        body: withMembers(body, { model: ctx.model, stream: true, stream_options: streamOptions, ...withoutThinkingBlocks(body) }),
        signal: ctx.signal,
      },
      { meter, translator: new OpenAIFrameTranslator(client.identity, meter, includeUsage) },
    );
  }

  async embeddings(ctx: CallContext, body: OpenAIEmbeddingsRequest): Promise<EmbeddingsResult> {
    this.requireCredentials();
    const { client, route } = this.options;
    const { value: json, text } = await client.sendJsonText<OpenAIEmbeddingsResponse>({
      path: route.embeddingsPath(ctx.model),
      headers: route.headers,
      body: withMembers(body, { model: ctx.model }),
      signal: ctx.signal,
    });
    if (!Array.isArray(json.data)) throw badUpstreamResponse(client.identity, 'answered without a data array.');
    const reported = json.usage?.prompt_tokens;
    if (typeof reported === 'number') return { body: json, usage: { prompt_tokens: reported, completion_tokens: 0, estimated: false }, raw: text };
    const usage: Usage = { prompt_tokens: estimateEmbeddingTokens(body.input), completion_tokens: 0, estimated: true };
    json.usage ??= { prompt_tokens: usage.prompt_tokens, total_tokens: usage.prompt_tokens };
    return { body: json, usage };
  }

  private async createResponse(ctx: ResponsesCallContext, body: Record<string, unknown>): Promise<ResponsesResult> {
    const { client } = this.options;
    const request = this.responsesRequest(ctx, withMembers(body, { model: this.responsesModel(ctx.model), stream: undefined, stream_options: undefined }));
    const { value, text } = await client.sendJsonText<Record<string, unknown>>(request);
    if (!Array.isArray(value.output)) throw badUpstreamResponse(client.identity, 'answered without an output array.');
    // A failed response is no answer: rejecting lets the caller fall back, as for a 5xx.
    if (value.status === 'failed') throw responsesFailure(client.identity, JSON.stringify(value.error ?? null), 'in its response');
    return { text, value, usage: responsesUsage(value, ctx) };
  }

  private async streamResponse(ctx: ResponsesCallContext, body: Record<string, unknown>): Promise<ResponsesStream> {
    const { client } = this.options;
    // The client's fields in their order, the upstream's model name in its place.
    const request = this.responsesRequest(ctx, withMembers(body, { model: this.responsesModel(ctx.model), stream: true }));
    const meter = new StreamMeter(ctx.estimatePromptTokens, responsesDeltaText);
    const translator = new OpenAIResponsesFrames(client.identity, meter);
    const stream = await client.openFrames(request, { meter, translator });
    return Object.assign(stream, { finalResponse: () => translator.finalResponse() });
  }

  private responsesRequest(ctx: ResponsesCallContext, body: string | Buffer): UpstreamRequest {
    this.requireCredentials();
    const { route } = this.options;
    return { path: route.responsesPath!(ctx.model), headers: route.headers, body, signal: ctx.signal };
  }

  private responsesModel(model: string): string {
    return this.options.route.responsesModel?.(model) ?? model;
  }

  close(): Promise<void> {
    return this.options.client.close();
  }

  private requireCredentials(): void {
    if (this.options.missingCredentials !== null) {
      throw new AgentgwError('upstream_bad_response', this.options.missingCredentials);
    }
  }
}

/**
 * Claude's signed thinking that a chat client gives back (`thinking_blocks` on its assistant messages) is for Claude
 * only, and Gemini's signatures of calls (`extra_content` of tool_calls) for Gemini only: the messages without them, when
 * some message has them (else nothing to change).
 */
function withoutThinkingBlocks(body: OpenAIChatRequest): { messages?: OpenAIChatRequest['messages'] } {
  const messages = body.messages;
  const signed = (m: unknown) =>
    typeof m === 'object' && m !== null && ('thinking_blocks' in m || (Array.isArray((m as { tool_calls?: unknown }).tool_calls) && (m as { tool_calls: unknown[] }).tool_calls.some((c) => typeof c === 'object' && c !== null && 'extra_content' in c)));
  if (!Array.isArray(messages) || !messages.some(signed)) return {};
  return {
    messages: messages.map((m) => {
      if (!signed(m)) return m;
      const { thinking_blocks: _, ...rest } = m as typeof m & { thinking_blocks?: unknown };
      if (rest.role !== 'assistant' || !rest.tool_calls) return rest;
      return { ...rest, tool_calls: rest.tool_calls.map((c) => (typeof c === 'object' && c !== null && 'extra_content' in c ? (({ extra_content: _e, ...call }) => call)(c) : c)) };
    }),
  };
}

function estimateChatUsage(body: OpenAIChatRequest, completion: OpenAIChatCompletion): Usage {
  let text = '';
  for (const choice of completion.choices) {
    text += contentText(choice.message?.content);
    for (const call of choice.message?.tool_calls ?? []) text += call.function.name + call.function.arguments;
  }
  return { prompt_tokens: estimatePromptTokens(body), completion_tokens: countTokens(text), estimated: true };
}

