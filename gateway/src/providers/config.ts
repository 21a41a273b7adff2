// The `providers.<name>` entry of agentgw.yaml, one strict shape per provider type so that typos fail at start-up.
import { z } from 'zod';

const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const Millis = z.int().positive().max(3_600_000);
const PromptCaching = z
  .enum(['auto', 'off'], { error: 'must be "auto" or "off"' })
  .optional()
  .describe('"auto" (default): chat requests translated to Claude get prompt-cache breakpoints on the tools, the system prompt and the conversation so far, unless the client set its own; "off": sent as the client wrote them.');

/** Settings every upstream over HTTP accepts. */
const httpSettings = {
  base_url: HttpUrl.optional().describe('Upstream base address; each type has a default except where required.'),
  api_key: z.string().min(1).optional().describe('Secret; write it as ${ENV_VAR}.'),
  api_keys: z.array(z.string().min(1)).min(1).max(64).optional()
    .describe('A key pool instead of api_key: keys used in turn, each resting on its own 429s; write them as ${ENV_VAR}.'),
  models: z.array(z.string().min(1)).optional().describe('Models advertised in GET /models and the system config.'),
  timeout_ms: Millis.optional().describe('Time allowed until the upstream answers with its headers (default 60000).'),
  connect_timeout_ms: Millis.optional().describe('TCP + TLS connect timeout (default 10000).'),
  body_timeout_ms: Millis.optional().describe('Longest silence allowed between two chunks of a response body (default 120000).'),
  max_connections: z.int().positive().max(4096).optional().describe('Keep-alive connections kept to the upstream (default 128).'),
  headers: z.record(z.string(), z.string()).optional().describe('Extra headers sent with every upstream request.'),
};

export const OpenAIProviderConfig = z.strictObject({ type: z.literal('openai'), ...httpSettings });

export const AzureOpenAIProviderConfig = z.strictObject({
  type: z.literal('azure-openai'),
  ...httpSettings,
  base_url: HttpUrl.describe('The resource endpoint, e.g. https://my-resource.openai.azure.com.'),
  api_version: z.string().min(1).optional().describe('The api-version query parameter of chat and embeddings calls (default 2024-10-21); Responses calls use the v1 API, which takes none.'),
  deployments: z.record(z.string(), z.string().min(1)).optional().describe('Model name -> deployment name; unmapped models use their own name.'),
});

export const AnthropicProviderConfig = z.strictObject({
  type: z.literal('anthropic'),
  ...httpSettings,
  api_version: z.string().min(1).optional().describe('The anthropic-version header (default 2023-06-01).'),
  default_max_tokens: z.int().positive().optional().describe('max_tokens sent when the client gives none; Anthropic requires one (default 4096).'),
  prompt_caching: PromptCaching,
});

export const GeminiProviderConfig = z.strictObject({ type: z.literal('gemini'), ...httpSettings });

export const BedrockProviderConfig = z.strictObject({
  type: z.literal('bedrock'),
  ...httpSettings,
  api_key: z.string().min(1).optional().describe('A Bedrock API key (bearer token); used instead of SigV4 when set.'),
  region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, { error: 'must be an AWS region such as us-east-1' }).optional()
    .describe('AWS region (default: AWS_REGION from the environment).'),
  access_key_id: z.string().min(1).optional().describe('Default: AWS_ACCESS_KEY_ID from the environment.'),
  secret_access_key: z.string().min(1).optional().describe('Default: AWS_SECRET_ACCESS_KEY from the environment.'),
  session_token: z.string().min(1).optional().describe('Default: AWS_SESSION_TOKEN from the environment.'),
  prompt_caching: PromptCaching,
});

export const OpenAICompatibleProviderConfig = z.strictObject({
  type: z.literal('openai-compatible'),
  ...httpSettings,
  base_url: HttpUrl.describe('The server address including its version segment, e.g. https://api.groq.com/openai/v1.'),
  stream_usage: z.boolean().optional().describe('Ask for usage in streams with stream_options (default true); false for servers that reject it.'),
});

export const MockProviderConfig = z.strictObject({
  type: z.literal('mock'),
  models: z.array(z.string().min(1)).optional(),
  embedding_dimensions: z.int().positive().max(8192).optional().describe('Length of mock embedding vectors (default 256).'),
});

export const ProviderConfig = z.discriminatedUnion('type', [
  OpenAIProviderConfig,
  AzureOpenAIProviderConfig,
  AnthropicProviderConfig,
  GeminiProviderConfig,
  BedrockProviderConfig,
  OpenAICompatibleProviderConfig,
  MockProviderConfig,
]);
export type ProviderConfig = z.infer<typeof ProviderConfig>;

export type OpenAIProviderConfig = z.infer<typeof OpenAIProviderConfig>;
export type AzureOpenAIProviderConfig = z.infer<typeof AzureOpenAIProviderConfig>;
export type AnthropicProviderConfig = z.infer<typeof AnthropicProviderConfig>;
export type GeminiProviderConfig = z.infer<typeof GeminiProviderConfig>;
export type BedrockProviderConfig = z.infer<typeof BedrockProviderConfig>;
export type OpenAICompatibleProviderConfig = z.infer<typeof OpenAICompatibleProviderConfig>;
export type MockProviderConfig = z.infer<typeof MockProviderConfig>;
export type HttpProviderConfig = Exclude<ProviderConfig, MockProviderConfig>;
