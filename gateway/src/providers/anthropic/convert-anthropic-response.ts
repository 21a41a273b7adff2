// An Anthropic message -> an OpenAI chat.completion and its usage.
import type { OpenAIChatCompletion, OpenAIToolCall, ThinkingBlock } from '../openai-format.js';
import { completionId, nowSeconds } from '../shared/completion-id.js';
import { toOpenAIUsage } from '../shared/openai-usage.js';
import type { Usage } from '../spec.js';
import type { AnthropicResponse, AnthropicThinkingBlock } from './anthropic-api.js';
import { anthropicPromptUsage } from './convert-anthropic-usage.js';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.js';

/**
 * Blocks of a tool Anthropic ran itself (server_tool_use, web_search_tool_result, ...): not calls for the client. The
 * text around them is one answer; a search between two pieces of text separates them as paragraphs.
 */
export function isServerToolBlock(type: string): boolean {
  return type === 'server_tool_use' || type.endsWith('_tool_result');
}

/** What goes between text written before a server tool ran and text written after it. */
export function textAfterServerTool(before: string, next: string): string {
  return before === '' || next === '' || /\s$/.test(before) || /^\s/.test(next) ? '' : '\n\n';
}

export function convertAnthropicResponse(response: AnthropicResponse, requestId: string): { body: OpenAIChatCompletion; usage: Usage } {
  let text = '';
  let afterServerTool = false;
  const toolCalls: OpenAIToolCall[] = [];
  // Thinking becomes reasoning_content, and its blocks are kept as they came (signed) for a later turn to give back.
  let reasoning = '';
  const thinking: ThinkingBlock[] = [];
  for (const block of response.content) {
    // Citations of a text block are dropped with the search results they point into.
    if (block.type === 'thinking') {
      const b = block as AnthropicThinkingBlock;
      reasoning += b.thinking ?? '';
      thinking.push({ type: 'thinking', thinking: b.thinking ?? '', signature: b.signature ?? '' });
    } else if (block.type === 'redacted_thinking') {
      thinking.push({ type: 'redacted_thinking', data: (block as AnthropicThinkingBlock).data ?? '' });
    } else if (block.type === 'text') {
      if (afterServerTool && block.text) {
        text += textAfterServerTool(text, block.text);
        afterServerTool = false;
      }
      text += block.text;
    } else if (isServerToolBlock(block.type)) afterServerTool = true;
    else if (block.type === 'tool_use') {
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  const prompt = anthropicPromptUsage(response.usage);
  const usage: Usage = {
    prompt_tokens: prompt.prompt_tokens ?? 0,
    completion_tokens: response.usage.output_tokens ?? 0,
    estimated: false,
  };
  if (prompt.cached_prompt_tokens !== undefined) usage.cached_prompt_tokens = prompt.cached_prompt_tokens;
  if (prompt.cache_write_prompt_tokens !== undefined) usage.cache_write_prompt_tokens = prompt.cache_write_prompt_tokens;
  if (prompt.cache_write_1h_prompt_tokens !== undefined) usage.cache_write_1h_prompt_tokens = prompt.cache_write_1h_prompt_tokens;
  if (prompt.web_search_calls !== undefined) usage.web_search_calls = prompt.web_search_calls;
  const message: OpenAIChatCompletion['choices'][number]['message'] = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  if (thinking.length > 0) message.thinking_blocks = thinking;
  return {
    body: {
      id: completionId(response.id, requestId),
      object: 'chat.completion',
      created: nowSeconds(),
      model: response.model,
      choices: [{ index: 0, message, finish_reason: mapAnthropicStopReason(response.stop_reason), logprobs: null }],
      usage: toOpenAIUsage(usage),
    },
    usage,
  };
}
