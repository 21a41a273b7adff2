// Amazon Bedrock Runtime: Converse / ConverseStream signed with SigV4, embeddings through InvokeModel.
import { AgentgwError } from '../../contract/errors.js';
import type { BedrockProviderConfig } from '../config.js';
import type { OpenAIChatRequest, OpenAIEmbeddingsRequest, OpenAIFinishReason } from '../openai-format.js';
import { createChatStream } from '../shared/chat-stream.js';
import { estimateEmbeddingTokens, estimatePromptTokens } from '../shared/count-tokens.js';
import { encodeEmbedding } from '../shared/embedding-encoding.js';
import { embeddingTexts } from '../shared/embeddings-input.js';
import { providerIdentity, type ProviderIdentity } from '../shared/provider-identity.js';
import { StreamMeter } from '../shared/stream-meter.js';
import { readJson, readText, UpstreamClient, type UpstreamResponse } from '../shared/upstream-client.js';
import { badUpstreamResponse } from '../shared/upstream-failure.js';
import type { CallContext, CancelSignal, ChatResult, ChatStream, EmbeddingsResult, MessagesCallContext, NativeMessages, ProviderAdapter, Usage } from '../spec.js';
import type { AnthropicResponse } from '../anthropic/anthropic-api.js';
import { AnthropicPassthroughFrames, anthropicDeltaText } from '../anthropic/anthropic-passthrough-frames.js';
import { nativeMessageUsage } from '../anthropic/native-message-usage.js';
import { bedrockMessagesFrames } from './bedrock-messages-frames.js';
import type { BedrockConverseResponse, CohereEmbeddingResponse, TitanEmbeddingResponse } from './bedrock-api.js';
import { bedrockStreamFrames } from './bedrock-stream-frames.js';
import { convertBedrockResponse } from './convert-bedrock-response.js';
import { bedrockEmbeddingFamily, cohereEmbeddingBody, cohereVectors, titanEmbeddingBody, titanVector } from './convert-to-bedrock-embeddings.js';
import { convertToBedrockRequest } from './convert-to-bedrock-request.js';
import type { PromptCaching } from '../anthropic/auto-cache.js';
import { CLAUDE_MODEL } from './auto-cache-points.js';
import { BedrockSigner, type BedrockAuth } from './sign-bedrock-request.js';

/** A Messages request in InvokeModel's envelope: no model or stream field, Bedrock's version, the betas in the body. */
function invokeBody(body: Record<string, unknown>, ctx: MessagesCallContext): string {
  const { model: _model, stream: _stream, ...rest } = body;
  const betas = ctx.clientHeaders['anthropic-beta'];
  return JSON.stringify({
    anthropic_version: 'bedrock-2023-05-31',
    ...rest,
    ...(betas ? { anthropic_beta: betas.split(',').map((b) => b.trim()).filter(Boolean) } : {}),
  });
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };
const STREAM_HEADERS = { 'content-type': 'application/json', accept: 'application/vnd.amazon.eventstream' };

export function bedrockRegion(config: BedrockProviderConfig): string {
  return config.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
}

function bedrockAuth(config: BedrockProviderConfig, region: string): BedrockAuth {
  if (config.api_key) return { kind: 'bearer', token: config.api_key };
  const accessKeyId = config.access_key_id ?? process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = config.secret_access_key ?? process.env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) return { kind: 'none' };
  const sessionToken = config.session_token ?? (config.access_key_id ? undefined : process.env.AWS_SESSION_TOKEN);
  return { kind: 'sigv4', region, credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } };
}

export class BedrockAdapter implements ProviderAdapter {
  readonly type = 'bedrock' as const;
  readonly baseUrl: string;
  readonly models: readonly string[];
  readonly configured: boolean;
  readonly supportsEmbeddings = true;
  private readonly identity: ProviderIdentity;
  private readonly client: UpstreamClient;
  private readonly signer: BedrockSigner;
  private readonly extraHeaders: Record<string, string>;
  private readonly promptCaching: PromptCaching;

  constructor(readonly name: string, config: BedrockProviderConfig) {
    const region = bedrockRegion(config);
    const auth = bedrockAuth(config, region);
    const secrets = auth.kind === 'sigv4' ? [auth.credentials.secretAccessKey, auth.credentials.sessionToken] : auth.kind === 'bearer' ? [auth.token] : [];
    this.identity = providerIdentity(name, config.type, secrets, 'its AWS credentials (or api_key) and their Bedrock permissions');
    this.client = new UpstreamClient(this.identity, config.base_url ?? `https://bedrock-runtime.${region}.amazonaws.com`, config);
    this.baseUrl = this.client.baseUrl;
    this.models = config.models ?? [];
    this.configured = auth.kind !== 'none';
    this.signer = new BedrockSigner(auth);
    this.extraHeaders = config.headers ?? {};
    this.promptCaching = config.prompt_caching ?? 'auto';
  }

  async chat(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatResult> {
    const payload = JSON.stringify(convertToBedrockRequest(this.name, body, ctx.model, this.promptCaching));
    const response = await this.send(`/model/${encodeURIComponent(ctx.model)}/converse`, payload, JSON_HEADERS, ctx.signal);
    const json = await readJsonBody<BedrockConverseResponse>(this.client, response, ctx.signal);
    if (!json.output?.message || !Array.isArray(json.output.message.content)) throw badUpstreamResponse(this.identity, 'answered without an output message.');
    return convertBedrockResponse(json, ctx.model, ctx.requestId, header(response, 'x-amzn-requestid'));
  }

  async chatStream(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatStream> {
    const payload = JSON.stringify(convertToBedrockRequest(this.name, body, ctx.model, this.promptCaching));
    const response = await this.send(`/model/${encodeURIComponent(ctx.model)}/converse-stream`, payload, STREAM_HEADERS, ctx.signal);
    const meter = new StreamMeter(() => estimatePromptTokens(body));
    const state = { finishReason: null as OpenAIFinishReason | null };
    return createChatStream({
      identity: this.identity,
      response,
      signal: ctx.signal,
      meter,
      finishReason: () => state.finishReason,
      frames: bedrockStreamFrames({
        identity: this.identity,
        body: response.body,
        meter,
        model: ctx.model,
        requestId: ctx.requestId,
        upstreamRequestId: header(response, 'x-amzn-requestid'),
        includeUsage: ctx.includeUsage ?? body.stream_options?.include_usage === true,
        state,
      }),
    });
  }

  async embeddings(ctx: CallContext, body: OpenAIEmbeddingsRequest): Promise<EmbeddingsResult> {
    const texts = embeddingTexts(this.name, body.input);
    const family = bedrockEmbeddingFamily(this.name, ctx.model);
    const path = `/model/${encodeURIComponent(ctx.model)}/invoke`;
    let vectors: number[][];
    let reportedTokens: number | undefined;
    if (family === 'titan') {
      // Titan embeds one text per call: the calls run side by side, and the first failure cancels the rest.
      const siblings = new AbortController();
      const follow = () => siblings.abort(ctx.signal.reason);
      if (ctx.signal.aborted) follow();
      else ctx.signal.addEventListener('abort', follow, { once: true });
      const signal = siblings.signal;
      const results = await Promise.all(
        texts.map(async (text) => {
          const response = await this.send(path, titanEmbeddingBody(text, body.dimensions), JSON_HEADERS, signal);
          const vector = titanVector(await readJsonBody<TitanEmbeddingResponse>(this.client, response, signal));
          if (!vector) throw badUpstreamResponse(this.identity, 'answered without an embedding.');
          return vector;
        }),
      )
        .catch((err: unknown) => {
          siblings.abort();
          throw err;
        })
        .finally(() => ctx.signal.removeEventListener('abort', follow));
      vectors = results.map((r) => r.values);
      reportedTokens = results.every((r) => typeof r.tokens === 'number') ? results.reduce((sum, r) => sum + (r.tokens ?? 0), 0) : undefined;
    } else {
      const response = await this.send(path, cohereEmbeddingBody(texts), JSON_HEADERS, ctx.signal);
      const found = cohereVectors(await readJsonBody<CohereEmbeddingResponse>(this.client, response, ctx.signal));
      if (!found || found.length !== texts.length) throw badUpstreamResponse(this.identity, 'answered without one embedding per input.');
      vectors = found;
      const counted = Number(header(response, 'x-amzn-bedrock-input-token-count'));
      reportedTokens = Number.isFinite(counted) && counted > 0 ? counted : undefined;
    }
    const usage: Usage =
      reportedTokens !== undefined
        ? { prompt_tokens: reportedTokens, completion_tokens: 0, estimated: false }
        : { prompt_tokens: estimateEmbeddingTokens(body.input), completion_tokens: 0, estimated: true };
    return {
      body: {
        object: 'list',
        data: vectors.map((values, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(values, body.encoding_format) })),
        model: ctx.model,
        usage: { prompt_tokens: usage.prompt_tokens, total_tokens: usage.prompt_tokens },
      },
      usage,
    };
  }

  /**
   * Claude models through InvokeModel: the client's Messages request in Bedrock's envelope (anthropic_version and the
   * betas in the body, the model in the path), the answer and its stream as Claude wrote them.
   */
  readonly messages: NativeMessages = {
    serves: (model) => CLAUDE_MODEL.test(model),
    create: async (ctx, body) => {
      const response = await this.send(`/model/${encodeURIComponent(ctx.model)}/invoke`, invokeBody(body, ctx), JSON_HEADERS, ctx.signal);
      const text = await readText(this.identity, response, ctx.signal);
      let message: AnthropicResponse;
      try {
        message = JSON.parse(text) as AnthropicResponse;
      } catch {
        throw badUpstreamResponse(this.identity, 'answered with a body that is not JSON.');
      }
      return { text, usage: nativeMessageUsage(this.identity, message, ctx) };
    },
    stream: async (ctx, body) => {
      const response = await this.send(`/model/${encodeURIComponent(ctx.model)}/invoke-with-response-stream`, invokeBody(body, ctx), STREAM_HEADERS, ctx.signal);
      const meter = new StreamMeter(ctx.estimatePromptTokens, anthropicDeltaText);
      const frames = new AnthropicPassthroughFrames(this.identity, meter);
      return createChatStream({
        identity: this.identity,
        response,
        signal: ctx.signal,
        meter,
        finishReason: () => frames.finishReason(),
        frames: bedrockMessagesFrames(this.identity, response.body, frames),
      });
    },
    // Counted locally: Bedrock's CountTokens is not offered in every region.
    countTokens: async (ctx) => JSON.stringify({ input_tokens: ctx.estimatePromptTokens() }),
  };

  close(): Promise<void> {
    return this.client.close();
  }

  private async send(path: string, payload: string, headers: Record<string, string>, signal: CancelSignal): Promise<UpstreamResponse> {
    if (!this.configured) {
      throw new AgentgwError('upstream_bad_response', `Provider "${this.name}" has no AWS credentials; set access_key_id and secret_access_key (or api_key) in the gateway configuration.`);
    }
    const signed = await this.signer.sign(this.client.host, this.client.pathFor(path), payload, { ...this.extraHeaders, ...headers });
    return this.client.send({ path, headers: signed, body: payload, signal });
  }
}

function readJsonBody<T>(client: UpstreamClient, response: UpstreamResponse, signal: CancelSignal): Promise<T> {
  return readJson<T>(client.identity, response, signal);
}

function header(response: UpstreamResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function createBedrockAdapter(name: string, config: BedrockProviderConfig): BedrockAdapter {
  return new BedrockAdapter(name, config);
}
