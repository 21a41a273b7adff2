// Bedrock Converse has no web search: web_search_options is not sent (a translated Responses request names web_search
// in x-agentgw-dropped-tools instead: the data plane translates it with webSearch false for bedrock).
import { describe, expect, it } from 'vitest';
import type { OpenAIChatRequest } from '../openai-format.js';
import { convertToBedrockRequest } from './convert-to-bedrock-request.js';

describe('bedrock: web_search_options', () => {
  it('is ignored', () => {
    const body: OpenAIChatRequest = { model: 'bedrock/claude', messages: [{ role: 'user', content: 'Node.js LTS?' }] };
    const searched = convertToBedrockRequest('bedrock', { ...body, web_search_options: { search_context_size: 'high' } });
    expect(searched).toEqual(convertToBedrockRequest('bedrock', body));
    expect(JSON.stringify(searched)).not.toMatch(/search/i);
  });
});
