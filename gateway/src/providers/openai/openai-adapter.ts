// api.openai.com: Bearer key, /chat/completions, /embeddings and /responses (native) under the base URL.
import type { OpenAIProviderConfig } from '../config.js';
import { providerIdentity } from '../shared/provider-identity.js';
import { UpstreamClient } from '../shared/upstream-client.js';
import { OpenAIFormatAdapter } from './openai-format-adapter.js';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

export function createOpenAIAdapter(name: string, config: OpenAIProviderConfig): OpenAIFormatAdapter {
  const identity = providerIdentity(name, config.type, [config.api_key]);
  const client = new UpstreamClient(identity, config.base_url ?? OPENAI_BASE_URL, config);
  const headers: Record<string, string> = { ...config.headers, 'content-type': 'application/json' };
  if (config.api_key) headers.authorization = `Bearer ${config.api_key}`;
  return new OpenAIFormatAdapter({
    name,
    type: config.type,
    models: config.models ?? [],
    client,
    route: { chatPath: () => '/chat/completions', embeddingsPath: () => '/embeddings', responsesPath: () => '/responses', headers },
    streamUsage: true,
    missingCredentials: config.api_key ? null : `Provider "${name}" has no api_key configured; set it in the gateway configuration.`,
  });
}
