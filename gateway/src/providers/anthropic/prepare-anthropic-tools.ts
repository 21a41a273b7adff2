// OpenAI tools, tool_choice and web_search_options -> Anthropic tools and tool_choice.
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIChatRequest } from '../openai-format.js';
import type { AnthropicClientTool, AnthropicTool, AnthropicToolChoice, AnthropicUserLocation, AnthropicWebSearchTool } from './anthropic-api.js';
import { cacheControlOf } from './cache-control.js';

/** The name Anthropic's web search tool goes by, in tools, tool_choice and server_tool_use blocks. */
export const ANTHROPIC_WEB_SEARCH = 'web_search';

export function prepareAnthropicTools(provider: string, body: OpenAIChatRequest): { tools?: AnthropicTool[]; tool_choice?: AnthropicToolChoice } {
  const clientTools = (body.tools ?? []).map((tool, k): AnthropicClientTool => {
    const out: AnthropicClientTool = {
      name: tool.function.name,
      description: tool.function.description,
      input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
    };
    // A prompt-cache breakpoint on a tool caches the tool definitions up to and including it.
    const cc = cacheControlOf(tool, `tools[${k}].cache_control`);
    if (cc) out.cache_control = cc;
    return out;
  });
  const search = webSearchTool(body.web_search_options);
  if (search && clientTools.some((t) => t.name === ANTHROPIC_WEB_SEARCH)) {
    throw new AgentgwError(
      'validation_failed',
      `Provider "${provider}" runs web search (web_search_options) as a tool named "${ANTHROPIC_WEB_SEARCH}", and a function tool of the request has that name too; rename the function.`,
      { param: 'tools' },
    );
  }
  // The server tool goes last: the client's tool definitions keep their places (and their prompt-cache prefix).
  const tools: AnthropicTool[] = search ? [...clientTools, search] : clientTools;
  if (tools.length === 0) return {};
  const noParallel = body.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  const choice = body.tool_choice;
  let tool_choice: AnthropicToolChoice | undefined;
  if (choice === 'none') tool_choice = { type: 'none' };
  else if (choice === 'required') {
    // A tool is required and web search is the only one: search.
    tool_choice = clientTools.length === 0 ? { type: 'tool', name: ANTHROPIC_WEB_SEARCH, ...noParallel } : { type: 'any', ...noParallel };
  } else if (typeof choice === 'object') tool_choice = { type: 'tool', name: choice.function.name, ...noParallel };
  else if (choice === 'auto' || body.parallel_tool_calls === false) tool_choice = { type: 'auto', ...noParallel };
  return tool_choice ? { tools, tool_choice } : { tools };
}

/**
 * web_search_options -> Anthropic's web search tool, its user_location carried over; search_context_size has no
 * counterpart (Anthropic chooses how much of the results to read). Read defensively: clients send any object here.
 */
function webSearchTool(options: unknown): AnthropicWebSearchTool | undefined {
  if (options == null || typeof options !== 'object') return undefined;
  const tool: AnthropicWebSearchTool = { type: 'web_search_20250305', name: ANTHROPIC_WEB_SEARCH };
  const where = (options as { user_location?: unknown }).user_location;
  const approximate = where && typeof where === 'object' ? (where as { approximate?: unknown }).approximate : undefined;
  if (approximate && typeof approximate === 'object') {
    const location: AnthropicUserLocation = { type: 'approximate' };
    for (const key of ['city', 'region', 'country', 'timezone'] as const) {
      const value = (approximate as Record<string, unknown>)[key];
      if (typeof value === 'string' && value) location[key] = value;
    }
    if (Object.keys(location).length > 1) tool.user_location = location;
  }
  return tool;
}
