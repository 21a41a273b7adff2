// An OpenAI chat request -> the body of Converse / ConverseStream.
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIChatRequest } from '../openai-format.js';
import { maxOutputTokens, stopSequences } from '../shared/message-content.js';
import { type Breakpoint, cacheControlOf, checkTtlOrder } from '../anthropic/cache-control.js';
import type { BedrockCachePoint, BedrockConverseRequest, BedrockToolSpec } from './bedrock-api.js';
import { cachePoint, convertToBedrockMessages } from './convert-to-bedrock-messages.js';
import type { PromptCaching } from '../anthropic/auto-cache.js';
import { placeBedrockCachePoints } from './auto-cache-points.js';

export function convertToBedrockRequest(provider: string, body: OpenAIChatRequest, model = '', promptCaching: PromptCaching = 'auto'): BedrockConverseRequest {
  if (body.n != null && body.n > 1) {
    throw new AgentgwError('validation_failed', `Provider "${provider}" returns one choice per request; send n = 1.`, { param: 'n' });
  }
  const { system, messages, breakpoints } = convertToBedrockMessages(provider, body.messages);
  const toolBreakpoints: Breakpoint[] = [];
  const request: BedrockConverseRequest = { messages };
  if (system) request.system = system;

  const inference: NonNullable<BedrockConverseRequest['inferenceConfig']> = {};
  const max = maxOutputTokens(body);
  if (max !== undefined) inference.maxTokens = max;
  if (body.temperature != null) inference.temperature = body.temperature;
  if (body.top_p != null) inference.topP = body.top_p;
  const stop = stopSequences(body.stop);
  if (stop) inference.stopSequences = stop;
  if (Object.keys(inference).length > 0) request.inferenceConfig = inference;

  if (body.tools?.length) {
    const tools = body.tools.flatMap((tool, k): Array<BedrockToolSpec | BedrockCachePoint> => {
      const spec: BedrockToolSpec = {
        toolSpec: {
          name: tool.function.name,
          ...(tool.function.description ? { description: tool.function.description } : {}),
          inputSchema: { json: tool.function.parameters ?? { type: 'object', properties: {} } },
        },
      };
      // A prompt-cache breakpoint on a tool: a cachePoint right after it.
      const param = `tools[${k}].cache_control`;
      const cc = cacheControlOf(tool, param);
      if (!cc) return [spec];
      toolBreakpoints.push({ param, ttl: cc.ttl });
      return [spec, cachePoint(cc.ttl)];
    });
    const choice = body.tool_choice;
    // Converse has no "none": the tools stay declared (history may reference them) with no forced choice.
    if (choice === 'required') request.toolConfig = { tools, toolChoice: { any: {} } };
    else if (typeof choice === 'object') request.toolConfig = { tools, toolChoice: { tool: { name: choice.function.name } } };
    else if (choice === 'auto') request.toolConfig = { tools, toolChoice: { auto: {} } };
    else request.toolConfig = { tools };
  }
  // Converse reads the prompt as tools, then system, then messages.
  checkTtlOrder(provider, [...toolBreakpoints, ...breakpoints]);
  // Breakpoints the client set are its choice; without any, the gateway places its own on Claude (auto-cache-points.ts).
  if (promptCaching === 'auto' && toolBreakpoints.length === 0 && breakpoints.length === 0) placeBedrockCachePoints(model, request);

  const format = body.response_format;
  if (format?.type === 'json_schema' && format.json_schema.schema) {
    request.outputConfig = {
      textFormat: {
        type: 'json_schema',
        structure: {
          jsonSchema: {
            schema: JSON.stringify(format.json_schema.schema),
            name: format.json_schema.name,
            ...(format.json_schema.description ? { description: format.json_schema.description } : {}),
          },
        },
      },
    };
  }
  return request;
}
