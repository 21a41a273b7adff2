// The provider registry: a validated `providers.<name>` config in, a ready adapter (with its connection pool) out.
import { createAnthropicAdapter } from './anthropic/anthropic-adapter.js';
import { createAzureOpenAIAdapter } from './azure-openai/azure-openai-adapter.js';
import { createBedrockAdapter } from './bedrock/bedrock-adapter.js';
import { ProviderConfig } from './config.js';
import { createGeminiAdapter } from './gemini/gemini-adapter.js';
import { createMockAdapter } from './mock/mock-adapter.js';
import { createOpenAIAdapter } from './openai/openai-adapter.js';
import { createOpenAICompatibleAdapter } from './openai-compatible/openai-compatible-adapter.js';
import type { ProviderAdapter } from './spec.js';

export type * from './spec.js';
export { ProviderConfig } from './config.js';

/** A configuration the schema rejects, named by provider and field, so start-up can say what to fix. */
export class ProviderConfigError extends Error {
  override readonly name = 'ProviderConfigError';
}

/** What the gateway's own configuration sets for every provider. */
export interface ProviderOptions {
  /** limits.upstream_body_mb, in bytes (see shared/upstream-body-limit.ts). */
  maxBodyBytes?: number;
}

/** Builds the adapter for one configured provider; the config is validated here (strictly: unknown keys are errors). */
export function createProvider(name: string, config: unknown, options: ProviderOptions = {}): ProviderAdapter {
  const parsed = ProviderConfig.safeParse(config);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : 'config'}: ${issue.message}`).join('; ');
    throw new ProviderConfigError(`Invalid configuration of provider "${name}": ${issues}.`);
  }
  // Every HTTP adapter hands its settings to its UpstreamClient, which reads max_body_bytes from them.
  const c = parsed.data.type === 'mock' || options.maxBodyBytes === undefined ? parsed.data : { ...parsed.data, max_body_bytes: options.maxBodyBytes };
  switch (c.type) {
    case 'openai':
      return createOpenAIAdapter(name, c);
    case 'azure-openai':
      return createAzureOpenAIAdapter(name, c);
    case 'anthropic':
      return createAnthropicAdapter(name, c);
    case 'gemini':
      return createGeminiAdapter(name, c);
    case 'bedrock':
      return createBedrockAdapter(name, c);
    case 'openai-compatible':
      return createOpenAICompatibleAdapter(name, c);
    case 'mock':
      return createMockAdapter(name, c);
  }
}
