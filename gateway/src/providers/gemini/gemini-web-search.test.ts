// Web search on the chat path: web_search_options -> Google Search grounding (tools: [{ googleSearch: {} }]).
// Fixture: generate-content-google-search.json, a grounded answer in the shape of the Gemini API's (groundingMetadata,
// toolUsePromptTokenCount).
import { describe, expect, it } from 'vitest';
import { adapterOnFakeUpstream, ctx, FakeUpstream, fixtureReader, jsonReply } from '../__fixtures__/fake-upstream.js';
import { createProvider } from '../index.js';
import type { OpenAIChatRequest, ProviderAdapter } from '../spec.js';
import { convertToGeminiRequest } from './convert-to-gemini-request.js';

const fixtures = fixtureReader(import.meta.url);

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Current weather of a city', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
};

const question: OpenAIChatRequest = {
  model: 'gemini/gemini-2.5-flash',
  messages: [{ role: 'user', content: 'What is the current Node.js LTS?' }],
  web_search_options: { search_context_size: 'low', user_location: { type: 'approximate', approximate: { country: 'FR' } } },
};

describe('gemini: web_search_options', () => {
  it('becomes Google Search grounding, its options having no counterpart', () => {
    expect(convertToGeminiRequest('gemini', question)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'What is the current Node.js LTS?' }] }],
      tools: [{ googleSearch: {} }],
    });
    expect(convertToGeminiRequest('gemini', { ...question, web_search_options: {}, tool_choice: 'required' })).toMatchObject({ tools: [{ googleSearch: {} }] });
    expect(convertToGeminiRequest('gemini', { ...question, web_search_options: {}, tool_choice: 'required' })).not.toHaveProperty('toolConfig');
  });

  it('is left out next to function declarations (Gemini 2.x refuses the two together), and with tool_choice "none"', () => {
    const withTools = convertToGeminiRequest('gemini', { ...question, tools: [weatherTool], tool_choice: 'auto' });
    expect(withTools.tools).toEqual([{ functionDeclarations: [{ name: 'get_weather', description: 'Current weather of a city', parametersJsonSchema: weatherTool.function.parameters }] }]);
    expect(convertToGeminiRequest('gemini', { ...question, tool_choice: 'none' })).not.toHaveProperty('tools');
  });

  it('is not asked for without web_search_options', () => {
    const { web_search_options: _, ...plain } = question;
    expect(convertToGeminiRequest('gemini', plain)).not.toHaveProperty('tools');
  });
});

describe('gemini adapter: a grounded answer', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('gemini', { type: 'gemini', base_url: `${url}/v1beta`, api_key: 'AIzaSyTest0123456789abcdefghijklmnopq' }),
    (u, a) => ((upstream = u), (adapter = a)),
  );

  it('sends googleSearch and answers with the text; groundingMetadata is not carried back; search prompt tokens are billed', async () => {
    upstream.respond(jsonReply(200, fixtures.json('generate-content-google-search.json')));
    const result = await adapter.chat(ctx('gemini-2.5-flash'), question);
    expect(upstream.last.json().tools).toEqual([{ googleSearch: {} }]);
    expect(result.body.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'The current Active LTS line is Node.js 24, supported until April 2028.' }, finish_reason: 'stop', logprobs: null },
    ]);
    // promptTokenCount 11 + toolUsePromptTokenCount 120; candidates 19 + thoughts 112.
    expect(result.usage).toEqual({ prompt_tokens: 131, completion_tokens: 131, estimated: false });
  });
});
