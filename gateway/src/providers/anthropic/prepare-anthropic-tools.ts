// OpenAI tools and tool_choice -> Anthropic tools and tool_choice.
import type { OpenAIChatRequest } from '../openai-format.js';
import type { AnthropicTool, AnthropicToolChoice } from './anthropic-api.js';
import { cacheControlOf } from './cache-control.js';

export function prepareAnthropicTools(body: OpenAIChatRequest): { tools?: AnthropicTool[]; tool_choice?: AnthropicToolChoice } {
  if (!body.tools?.length) return {};
  const tools = body.tools.map((tool, k): AnthropicTool => {
    const out: AnthropicTool = {
      name: tool.function.name,
      description: tool.function.description,
      input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
    };
    // A prompt-cache breakpoint on a tool caches the tool definitions up to and including it.
    const cc = cacheControlOf(tool, `tools[${k}].cache_control`);
    if (cc) out.cache_control = cc;
    return out;
  });
  const noParallel = body.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  const choice = body.tool_choice;
  let tool_choice: AnthropicToolChoice | undefined;
  if (choice === 'none') tool_choice = { type: 'none' };
  else if (choice === 'required') tool_choice = { type: 'any', ...noParallel };
  else if (typeof choice === 'object') tool_choice = { type: 'tool', name: choice.function.name, ...noParallel };
  else if (choice === 'auto' || body.parallel_tool_calls === false) tool_choice = { type: 'auto', ...noParallel };
  return tool_choice ? { tools, tool_choice } : { tools };
}
