// Anthropic client tools and tool_choice -> OpenAI function tools, tool_choice and parallel_tool_calls.
import type { OpenAITool, OpenAIToolChoice } from '../providers/openai-format.js';
import { invalidField, isObject } from './invalid-field.js';

export function convertTools(tools: unknown): OpenAITool[] | undefined {
  if (tools == null) return undefined;
  if (!Array.isArray(tools)) throw invalidField('tools', 'tools must be an array of tool definitions.');
  if (tools.length === 0) return undefined;
  return tools.map((tool, n) => {
    const at = `tools.${n}`;
    if (!isObject(tool)) throw invalidField(at, `${at} must be a tool definition object.`);
    if (tool.type != null && tool.type !== 'custom') {
      throw invalidField(at, `${at} is the server tool "${String(tool.type)}", which Anthropic runs itself and the target provider cannot: remove it, define it as a client tool (name, description, input_schema) that your agent runs, or route to an Anthropic model.`);
    }
    if (typeof tool.name !== 'string' || !tool.name) throw invalidField(`${at}.name`, `${at}.name must be the tool's name (a non-empty string).`);
    if (tool.input_schema != null && !isObject(tool.input_schema)) {
      throw invalidField(`${at}.input_schema`, `${at}.input_schema must be a JSON schema object.`);
    }
    // As Anthropic requires: a tool's input is an object, and a schema of anything else would let the target answer a
    // call whose arguments no tool_use block can hold.
    if (isObject(tool.input_schema) && tool.input_schema.type !== 'object') {
      throw invalidField(`${at}.input_schema.type`, `${at}.input_schema.type must be "object": a tool's input is a JSON object.`);
    }
    const fn: OpenAITool['function'] = { name: tool.name };
    if (typeof tool.description === 'string') fn.description = tool.description;
    fn.parameters = (tool.input_schema as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} };
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
    return { type: 'function', function: fn };
  });
}

/** OpenAI refuses tool_choice and parallel_tool_calls without tools, so they are set only alongside tools. */
export function convertToolChoice(
  choice: unknown,
  hasTools: boolean,
): { tool_choice?: OpenAIToolChoice; parallel_tool_calls?: boolean } {
  if (choice == null) return {};
  if (!isObject(choice)) throw invalidField('tool_choice', 'tool_choice must be an object such as {"type": "auto"}.');
  let toolChoice: OpenAIToolChoice;
  switch (choice.type) {
    case 'auto':
      toolChoice = 'auto';
      break;
    case 'any':
      toolChoice = 'required';
      break;
    case 'none':
      toolChoice = 'none';
      break;
    case 'tool':
      if (typeof choice.name !== 'string' || !choice.name) throw invalidField('tool_choice.name', 'tool_choice.name must name one of the tools.');
      toolChoice = { type: 'function', function: { name: choice.name } };
      break;
    default:
      throw invalidField('tool_choice.type', 'tool_choice.type must be "auto", "any", "tool" or "none".');
  }
  if (!hasTools) {
    if (toolChoice === 'auto' || toolChoice === 'none') return {};
    throw invalidField('tool_choice', 'tool_choice requires a tool call but the request has no tools; add tools or remove tool_choice.');
  }
  const out: { tool_choice?: OpenAIToolChoice; parallel_tool_calls?: boolean } = { tool_choice: toolChoice };
  if (choice.disable_parallel_tool_use === true && toolChoice !== 'none') out.parallel_tool_calls = false;
  return out;
}
