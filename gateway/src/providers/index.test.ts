import { describe, expect, it } from 'vitest';
import { createProvider, ProviderConfig, ProviderConfigError } from './index.js';

describe('createProvider', () => {
  it.each([
    ['openai', { type: 'openai', api_key: 'k' }, 'https://api.openai.com/v1'],
    ['azure', { type: 'azure-openai', base_url: 'https://r.openai.azure.com', api_key: 'k' }, 'https://r.openai.azure.com'],
    ['anthropic', { type: 'anthropic', api_key: 'k' }, 'https://api.anthropic.com/v1'],
    ['gemini', { type: 'gemini', api_key: 'k' }, 'https://generativelanguage.googleapis.com/v1beta'],
    ['bedrock', { type: 'bedrock', region: 'us-east-1', api_key: 'k' }, 'https://bedrock-runtime.us-east-1.amazonaws.com'],
    ['groq', { type: 'openai-compatible', base_url: 'https://api.groq.com/openai/v1/' }, 'https://api.groq.com/openai/v1'],
    ['mock', { type: 'mock' }, null],
  ])('builds %s with its base URL', async (name, config, baseUrl) => {
    const adapter = createProvider(name, config);
    expect(adapter.name).toBe(name);
    expect(adapter.type).toBe(config.type);
    expect(adapter.baseUrl).toBe(baseUrl);
    await adapter.close();
  });

  it('rejects unknown keys, unknown types and bad values with a sentence naming provider and field', () => {
    expect(() => createProvider('openai', { type: 'openai', api_kye: 'k' })).toThrow(ProviderConfigError);
    expect(() => createProvider('openai', { type: 'openai', api_kye: 'k' })).toThrow(/provider "openai".*api_kye/);
    expect(() => createProvider('x', { type: 'cohere' })).toThrow(/type/);
    expect(() => createProvider('x', { type: 'openai', base_url: 'ftp://host' })).toThrow(/base_url/);
    expect(() => createProvider('x', { type: 'bedrock', region: 'mars' })).toThrow(/region/);
    expect(() => createProvider('x', { type: 'openai', timeout_ms: -1 })).toThrow(/timeout_ms/);
  });

  it('exports the config schema', () => {
    expect(ProviderConfig.safeParse({ type: 'anthropic', api_key: 'k', api_version: '2023-06-01', default_max_tokens: 1024 }).success).toBe(true);
    expect(ProviderConfig.safeParse({ type: 'anthropic', deployments: {} }).success).toBe(false);
  });
});
