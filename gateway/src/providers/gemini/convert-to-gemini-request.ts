// An OpenAI chat request -> the body of generateContent / streamGenerateContent.
import type { OpenAIChatRequest } from '../openai-format.js';
import { maxOutputTokens, stopSequences } from '../shared/message-content.js';
import type { GeminiGenerationConfig, GeminiRequest } from './gemini-api.js';
import { convertToGeminiContents } from './convert-to-gemini-contents.js';
import { geminiThinkingConfig } from './gemini-thinking-config.js';

/** `model` is the target's model id (the path's), which decides the thinking settings it takes. */
export function convertToGeminiRequest(provider: string, body: OpenAIChatRequest, model = body.model): GeminiRequest {
  const request: GeminiRequest = convertToGeminiContents(provider, body.messages);

  const config: GeminiGenerationConfig = {};
  if (body.temperature != null) config.temperature = body.temperature;
  if (body.top_p != null) config.topP = body.top_p;
  const max = maxOutputTokens(body);
  if (max !== undefined) config.maxOutputTokens = max;
  const stop = stopSequences(body.stop);
  if (stop) config.stopSequences = stop;
  if (body.n != null && body.n > 1) config.candidateCount = body.n;
  if (body.presence_penalty != null) config.presencePenalty = body.presence_penalty;
  if (body.frequency_penalty != null) config.frequencyPenalty = body.frequency_penalty;
  if (body.seed != null) config.seed = body.seed;
  const format = body.response_format;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  else if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    if (format.json_schema.schema) config.responseJsonSchema = format.json_schema.schema;
  }
  const thinking = geminiThinkingConfig(model, (body as { reasoning_effort?: unknown }).reasoning_effort, max);
  if (thinking) config.thinkingConfig = thinking;
  if (Object.keys(config).length > 0) request.generationConfig = config;

  if (!body.tools?.length) {
    // Google Search grounding (Gemini 2.x cannot combine it with function declarations: it is sent only without them).
    // search_context_size and user_location have no counterpart; the answer's groundingMetadata is not carried back.
    if (body.web_search_options && body.tool_choice !== 'none') request.tools = [{ googleSearch: {} }];
  } else {
    request.tools = [
      {
        functionDeclarations: body.tools.map((tool) => ({
          name: tool.function.name,
          ...(tool.function.description ? { description: tool.function.description } : {}),
          ...(tool.function.parameters ? { parametersJsonSchema: tool.function.parameters } : {}),
        })),
      },
    ];
    const choice = body.tool_choice;
    if (choice === 'none') request.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
    else if (choice === 'required') request.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
    else if (typeof choice === 'object') {
      request.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
    }
  }
  return request;
}
