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

/** Builds the adapter for one configured provider; the config is validated here (strictly: unknown keys are errors). */
export function createProvider(name: string, config: unknown): ProviderAdapter {
  const parsed = ProviderConfig.safeParse(config);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : 'config'}: ${issue.message}`).join('; ');
    throw new ProviderConfigError(`Invalid configuration of provider "${name}": ${issues}.`);
  }
  const c = parsed.data;
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
