import { describe, expect, test } from 'vitest';
import { AgentgwError } from '../contract/errors.js';
import { GEMINI_DROPPED_HINTS, geminiToChatRequest } from './gemini-to-chat-request.js';

const opts = { model: 'gpt-4o-mini', maxTokensField: 'max_tokens' as const, reasons: false, stream: false };
const user = (text: string) => ({ role: 'user', parts: [{ text }] });

function refusal(body: Record<string, unknown>, o = opts): AgentgwError {
  try {
    geminiToChatRequest(body, o);
  } catch (e) {
    if (e instanceof AgentgwError) return e;
    throw e;
  }
  throw new Error('expected a 400');
}

describe('Gemini generateContent -> Chat Completions', () => {
  test('system instruction, turns, calls paired by id and, without ids, by name and order', () => {
    const out = geminiToChatRequest(
      {
        systemInstruction: { parts: [{ text: 'be brief' }, { text: 'and kind' }] },
        contents: [
          user('weather in Paris and Lyon?'),
          {
            role: 'model',
            parts: [
              { text: 'thinking aloud', thought: true },
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig' },
              { functionCall: { name: 'get_weather', args: { city: 'Lyon' } } },
            ],
          },
          {
            role: 'user',
            parts: [
              { functionResponse: { name: 'get_weather', response: { output: 'sunny' } } },
              { functionResponse: { name: 'get_weather', response: { output: 'rain' } } },
              { text: 'thanks' },
            ],
          },
        ],
      },
      opts,
    );
    expect(out.messages).toEqual([
      { role: 'system', content: 'be brief\nand kind' },
      { role: 'user', content: 'weather in Paris and Lyon?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_gemini_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_gemini_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_gemini_0', content: '{"output":"sunny"}' },
      { role: 'tool', tool_call_id: 'call_gemini_1', content: '{"output":"rain"}' },
      { role: 'user', content: 'thanks' },
    ]);
  });

  test('tools, tool config and generation settings; OpenAPI schemas become JSON Schema', () => {
    const out = geminiToChatRequest(
      {
        contents: [user('hi')],
        tools: [{ functionDeclarations: [{ name: 'a', parameters: { type: 'OBJECT', properties: { q: { type: 'STRING', nullable: true } } } }, { name: 'b' }] }],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a'] } },
        generationConfig: { temperature: 0.3, topP: 0.9, topK: 40, maxOutputTokens: 500, stopSequences: ['END'], seed: 7, responseMimeType: 'application/json', responseSchema: { type: 'OBJECT' }, thinkingConfig: { thinkingLevel: 'HIGH' } },
      },
      { ...opts, reasons: true, maxOutputCap: 300 },
    );
    expect(out.tools).toEqual([{ type: 'function', function: { name: 'a', parameters: { type: 'object', properties: { q: { type: ['string', 'null'] } } } } }]);
    expect(out.tool_choice).toEqual({ type: 'function', function: { name: 'a' } });
    expect(out).toMatchObject({ temperature: 0.3, top_p: 0.9, max_tokens: 300, stop: ['END'], seed: 7, reasoning_effort: 'high' });
    expect(out.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object' } } });
    expect(JSON.stringify(out)).not.toContain('top_k');
  });

  test('media: images, PDFs and text files inline; an image URL by reference', () => {
    const out = geminiToChatRequest(
      {
        contents: [
          {
            role: 'user',
            parts: [
              { inlineData: { mimeType: 'image/png', data: 'iVBO' } },
              { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } },
              { inlineData: { mimeType: 'text/plain', data: Buffer.from('notes').toString('base64') } },
              { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' } },
            ],
          },
        ],
      },
      opts,
    );
    expect(out.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBO' } },
        { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'document.pdf' } },
        { type: 'text', text: 'notes' },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
      ],
    });
  });

  test.each([
    ['tools.0.codeExecution', { contents: [user('x')], tools: [{ codeExecution: {} }] }],
    ['safetySettings.0.threshold', { contents: [user('x')], safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_LOW_AND_ABOVE' }] }],
    ['cachedContent', { contents: [user('x')], cachedContent: 'cachedContents/abc' }],
    ['generationConfig.speechConfig', { contents: [user('x')], generationConfig: { speechConfig: {} } }],
    ['contents.0.parts.0.fileData.fileUri', { contents: [{ role: 'user', parts: [{ fileData: { mimeType: 'video/mp4', fileUri: 'gs://b/v.mp4' } }] }] }],
    ['contents.0.parts.0.executableCode', { contents: [{ role: 'model', parts: [{ executableCode: { language: 'PYTHON', code: '1' } }] }] }],
    ['contents.0.parts.0.inlineData.mimeType', { contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'video/mp4', data: 'AAAA' } }] }] }],
    ['toolConfig.functionCallingConfig.mode', { contents: [user('x')], toolConfig: { functionCallingConfig: { mode: 'VALIDATED' } } }],
    ['generationConfig.stopSequences', { contents: [user('x')], generationConfig: { stopSequences: ['a', 'b', 'c', 'd', 'e'] } }],
    ['contents', { contents: [] }],
  ])('what cannot be carried is a 400 naming %s', (param, body) => {
    const e = refusal(body);
    expect(e.status).toBe(400);
    expect(e.param).toBe(param);
    expect(e.message.length).toBeGreaterThan(20);
  });

  test('safety settings that ask for no filtering are dropped, as the README lists', () => {
    const out = geminiToChatRequest({ contents: [user('x')], safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }, { category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'OFF' }] }, opts);
    expect(Object.keys(out)).toEqual(['model', 'messages']);
    expect(Object.keys(GEMINI_DROPPED_HINTS)).toContain('generationConfig.topK');
  });
});
