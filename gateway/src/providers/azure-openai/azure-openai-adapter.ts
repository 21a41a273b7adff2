// Azure OpenAI: the deployment is in the path, the api-version in the query, the key in an api-key header (chat, embeddings);
// the Responses API is served natively through Azure's v1 API, the deployment in the body's model.
import type { AzureOpenAIProviderConfig } from '../config.js';
import { OpenAIFormatAdapter } from '../openai/openai-format-adapter.js';
import { providerIdentity } from '../shared/provider-identity.js';
import { UpstreamClient } from '../shared/upstream-client.js';

export const AZURE_OPENAI_API_VERSION = '2024-10-21';
export const AZURE_OPENAI_RESPONSES_PATH = '/openai/v1/responses';

export function createAzureOpenAIAdapter(name: string, config: AzureOpenAIProviderConfig): OpenAIFormatAdapter {
  const identity = providerIdentity(name, config.type, [config.api_key]);
  const client = new UpstreamClient(identity, config.base_url, config);
  const query = `?api-version=${encodeURIComponent(config.api_version ?? AZURE_OPENAI_API_VERSION)}`;
  const deployments = config.deployments ?? {};
  const deploymentPath = (model: string) => `/openai/deployments/${encodeURIComponent(deployments[model] ?? model)}`;
  const headers: Record<string, string> = { ...config.headers, 'content-type': 'application/json' };
  if (config.api_key) headers['api-key'] = config.api_key;
  return new OpenAIFormatAdapter({
    name,
    type: config.type,
    models: config.models ?? Object.keys(deployments),
    client,
    route: {
      chatPath: (model) => `${deploymentPath(model)}/chat/completions${query}`,
      embeddingsPath: (model) => `${deploymentPath(model)}/embeddings${query}`,
      // Azure documents Responses on its v1 API (GA, no dated api-version; "required to access the latest features"); the
      // dated /openai/responses?api-version=...-preview route is its previous generation.
      responsesPath: () => AZURE_OPENAI_RESPONSES_PATH,
      responsesModel: (model) => deployments[model] ?? model,
      headers,
    },
    streamUsage: true,
    missingCredentials: config.api_key ? null : `Provider "${name}" has no api_key configured; set it in the gateway configuration.`,
  });
}
