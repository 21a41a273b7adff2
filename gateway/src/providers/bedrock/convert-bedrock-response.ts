// A Converse response -> an OpenAI chat.completion and its usage.
import type { OpenAIChatCompletion, OpenAIToolCall } from '../openai-format.js';
import { completionId, nowSeconds } from '../shared/completion-id.js';
import { toOpenAIUsage } from '../shared/openai-usage.js';
import type { Usage } from '../spec.js';
import type { BedrockConverseResponse } from './bedrock-api.js';
import { bedrockUsage } from './convert-bedrock-usage.js';
import { mapBedrockStopReason } from './map-bedrock-stop-reason.js';

export function convertBedrockResponse(response: BedrockConverseResponse, model: string, requestId: string, upstreamRequestId?: string): { body: OpenAIChatCompletion; usage: Usage } {
  let text = '';
  const toolCalls: OpenAIToolCall[] = [];
  for (const block of response.output?.message?.content ?? []) {
    if ('text' in block) text += block.text;
    else if ('toolUse' in block) {
      toolCalls.push({ id: block.toolUse.toolUseId, type: 'function', function: { name: block.toolUse.name, arguments: JSON.stringify(block.toolUse.input ?? {}) } });
    }
  }
  const reported = bedrockUsage(response.usage);
  const usage: Usage = { prompt_tokens: reported.prompt_tokens ?? 0, completion_tokens: reported.completion_tokens ?? 0, estimated: false };
  if (reported.cached_prompt_tokens !== undefined) usage.cached_prompt_tokens = reported.cached_prompt_tokens;
  if (reported.cache_write_prompt_tokens !== undefined) usage.cache_write_prompt_tokens = reported.cache_write_prompt_tokens;
  if (reported.cache_write_1h_prompt_tokens !== undefined) usage.cache_write_1h_prompt_tokens = reported.cache_write_1h_prompt_tokens;
  const message: OpenAIChatCompletion['choices'][number]['message'] = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    body: {
      id: completionId(upstreamRequestId, requestId),
      object: 'chat.completion',
      created: nowSeconds(),
      model,
      choices: [{ index: 0, message, finish_reason: mapBedrockStopReason(response.stopReason), logprobs: null }],
      usage: toOpenAIUsage(usage),
    },
    usage,
  };
}
