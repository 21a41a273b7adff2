// Servers that speak OpenAI's format at their own address (Mistral, Groq, Together, DeepSeek, vLLM, Ollama...); the key is optional.
import type { OpenAICompatibleProviderConfig } from '../config.js';
import { OpenAIFormatAdapter } from '../openai/openai-format-adapter.js';
import { providerIdentity } from '../shared/provider-identity.js';
import { UpstreamClient } from '../shared/upstream-client.js';

export function createOpenAICompatibleAdapter(name: string, config: OpenAICompatibleProviderConfig): OpenAIFormatAdapter {
  const identity = providerIdentity(name, config.type, [config.api_key]);
  const client = new UpstreamClient(identity, config.base_url, config);
  const headers: Record<string, string> = { ...config.headers, 'content-type': 'application/json' };
  if (config.api_key) headers.authorization = `Bearer ${config.api_key}`;
  return new OpenAIFormatAdapter({
    name,
    type: config.type,
    models: config.models ?? [],
    client,
    route: { chatPath: () => '/chat/completions', embeddingsPath: () => '/embeddings', headers },
    streamUsage: config.stream_usage ?? true,
    missingCredentials: null,
  });
}
