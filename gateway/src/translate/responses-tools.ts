// Responses tools and tool_choice -> OpenAI chat tools, tool_choice, parallel_tool_calls and web_search_options; and back
// from a chat tool call's name to the Responses tool it calls (function, custom or namespaced).
import type { OpenAIApproximateLocation, OpenAITool, OpenAIToolChoice, OpenAIWebSearchOptions } from '../providers/openai-format.js';
import { invalidField, isObject } from './invalid-field.js';

/** What a chat function name stands for on the Responses side. */
export interface ClientToolRef {
  /** function tools answer with function_call items, custom tools with custom_tool_call items. */
  kind: 'function' | 'custom';
  /** The tool's own name (without its namespace). */
  name: string;
  namespace?: string;
}

/** Chat function names of the client tools of a request: `<name>`, or `<namespace>__<name>` inside a namespace tool. */
export type ClientToolIndex = ReadonlyMap<string, ClientToolRef>;

/**
 * The web search the target runs itself, for the request's web_search tool:
 * - true: alongside the client's tools, and a tool_choice may require it (Anthropic's web search tool);
 * - 'without-client-tools': only in a call that sends no client tools (Gemini 2.x: Google Search cannot be combined with
 *   function declarations); a tool_choice that requires web search is asked for but the model decides;
 * - false: none; web search is left out and named in droppedTools, like the other built-in tools.
 */
export type TargetWebSearch = boolean | 'without-client-tools';

export interface ConvertedTools {
  tools?: OpenAITool[];
  tool_choice?: OpenAIToolChoice;
  parallel_tool_calls?: boolean;
  /** The request's web search, for a target that runs its own (chat's web_search_options). */
  web_search_options?: OpenAIWebSearchOptions;
  /** Built-in tools left out of the upstream call, by type, each once, in order (for x-agentgw-dropped-tools). */
  droppedTools: string[];
  index: ClientToolIndex;
}

/** web_search, web_search_preview and their dated versions (web_search_2025_08_26, web_search_preview_2025_03_11). */
const WEB_SEARCH_TYPE = /^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$/;

export function isWebSearchTool(type: string): boolean {
  return WEB_SEARCH_TYPE.test(type);
}

/** Joins a namespace and a tool name into one chat function name (chat names allow [a-zA-Z0-9_-]). */
export const NAMESPACE_SEPARATOR = '__';

const INPUT_SCHEMA = (description: string | undefined): Record<string, unknown> => ({
  type: 'object',
  properties: { input: description ? { type: 'string', description } : { type: 'string' } },
  required: ['input'],
  additionalProperties: false,
});

/** The client tools of `tools`, by chat function name; tolerant of bad entries (for echoes of requests already checked). */
export function responsesToolIndex(tools: unknown): ClientToolIndex {
  const index = new Map<string, ClientToolRef>();
  if (!Array.isArray(tools)) return index;
  for (const tool of tools) {
    if (!isObject(tool) || typeof tool.name !== 'string') continue;
    if (tool.type === 'function' || tool.type === 'custom') index.set(tool.name, { kind: tool.type, name: tool.name });
    else if (tool.type === 'namespace' && Array.isArray(tool.tools)) {
      for (const inner of tool.tools) {
        if (!isObject(inner) || typeof inner.name !== 'string' || (inner.type !== 'function' && inner.type !== 'custom')) continue;
        index.set(`${tool.name}${NAMESPACE_SEPARATOR}${inner.name}`, { kind: inner.type, name: inner.name, namespace: tool.name });
      }
    }
  }
  return index;
}

/** The chat function name of a call to `name` (inside `namespace`, if any). */
export function chatToolName(name: string, namespace?: string | null): string {
  return namespace ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
}

export function convertResponsesTools(tools: unknown, choice: unknown, parallel: unknown, webSearch: TargetWebSearch = false): ConvertedTools {
  /** The built-in tools of the request, by type, each once, in order. */
  const builtIn: string[] = [];
  /** The first web search tool's options (search_context_size, user_location); the others say the same thing. */
  let searchOptions: OpenAIWebSearchOptions | undefined;
  const chatTools: OpenAITool[] = [];
  if (tools != null && !Array.isArray(tools)) throw invalidField('tools', 'tools must be an array of tool definitions.');
  for (const [n, tool] of ((tools as unknown[] | undefined) ?? []).entries()) {
    const at = `tools.${n}`;
    if (!isObject(tool) || typeof tool.type !== 'string' || !tool.type) {
      throw invalidField(at, `${at} must be a tool definition object with a "type" ("function", "custom", "web_search", ...).`);
    }
    switch (tool.type) {
      case 'function':
        chatTools.push(functionTool(tool, at));
        break;
      case 'custom':
        chatTools.push(customTool(tool, at));
        break;
      case 'namespace': {
        const name = toolName(tool, at);
        if (!Array.isArray(tool.tools) || tool.tools.length === 0) {
          throw invalidField(`${at}.tools`, `${at}.tools must be a non-empty array of function and custom tools.`);
        }
        tool.tools.forEach((inner, k) => {
          const innerAt = `${at}.tools.${k}`;
          if (!isObject(inner)) throw invalidField(innerAt, `${innerAt} must be a function or custom tool definition.`);
          let converted: OpenAITool;
          if (inner.type === 'function') converted = functionTool(inner, innerAt);
          else if (inner.type === 'custom') converted = customTool(inner, innerAt);
          else throw invalidField(`${innerAt}.type`, `${innerAt}.type must be "function" or "custom": a namespace groups client tools.`);
          converted.function.name = chatToolName(converted.function.name, name);
          // The namespace's description tells the model what its tools are for.
          const nsDescription = typeof tool.description === 'string' && tool.description ? `${name}: ${tool.description}` : '';
          if (nsDescription) converted.function.description = converted.function.description ? `${converted.function.description}\n\n(${nsDescription})` : `(${nsDescription})`;
          chatTools.push(converted);
        });
        break;
      }
      default: {
        // A built-in tool: OpenAI runs it (web_search, file_search, code_interpreter, image_generation, mcp, tool_search)
        // or asks the client to with its own item types (computer_use_preview, local_shell, shell, apply_patch).
        if (isWebSearchTool(tool.type)) {
          const options = webSearchOptions(tool, at);
          searchOptions ??= options;
        }
        if (!builtIn.includes(tool.type)) builtIn.push(tool.type);
      }
    }
  }
  const seen = new Set<string>();
  chatTools.forEach((t, n) => {
    if (seen.has(t.function.name)) throw invalidField(`tools.${n}`, `Two tools are named "${t.function.name}"; give each tool its own name.`);
    seen.add(t.function.name);
  });

  const index = responsesToolIndex(tools);
  // Web search runs on a target that has its own, unless the tool_choice leaves it out; the other built-in tools never do.
  const searchOffered = searchOptions !== undefined && webSearch !== false;
  const picked = convertToolChoice(choice, chatTools, builtIn.filter((t) => !(searchOffered && isWebSearchTool(t))), index, searchOffered, webSearch !== false);
  const kept = picked.allowed ? chatTools.filter((t) => picked.allowed!.has(t.function.name)) : chatTools;
  const searchRuns = webSearch === true || (webSearch === 'without-client-tools' && kept.length === 0);
  const droppedTools = builtIn.filter((t) => !(searchRuns && isWebSearchTool(t)));
  const out: ConvertedTools = { droppedTools, index };
  if (searchRuns && searchOptions && picked.search) out.web_search_options = searchOptions;
  if (kept.length === 0) {
    // Only web search may run: a tool_choice that requires a tool requires it.
    if (out.web_search_options && picked.choice === 'required') out.tool_choice = 'required';
    return out;
  }
  out.tools = kept;
  if (picked.choice !== undefined) out.tool_choice = picked.choice;
  if (parallel != null) {
    if (typeof parallel !== 'boolean') throw invalidField('parallel_tool_calls', 'parallel_tool_calls must be true or false.');
    out.parallel_tool_calls = parallel;
  }
  return out;
}

function toolName(tool: Record<string, unknown>, at: string): string {
  if (typeof tool.name !== 'string' || !tool.name) throw invalidField(`${at}.name`, `${at}.name must be the tool's name (a non-empty string).`);
  return tool.name;
}

function functionTool(tool: Record<string, unknown>, at: string): OpenAITool {
  const name = toolName(tool, at);
  const fn: OpenAITool['function'] = { name };
  if (tool.description != null) {
    if (typeof tool.description !== 'string') throw invalidField(`${at}.description`, `${at}.description must be a string.`);
    if (tool.description) fn.description = tool.description;
  }
  if (tool.parameters != null && !isObject(tool.parameters)) throw invalidField(`${at}.parameters`, `${at}.parameters must be a JSON schema object.`);
  fn.parameters = (tool.parameters as Record<string, unknown> | null | undefined) ?? { type: 'object', properties: {} };
  if (tool.strict != null) {
    if (typeof tool.strict !== 'boolean') throw invalidField(`${at}.strict`, `${at}.strict must be true or false.`);
    fn.strict = tool.strict;
  }
  return { type: 'function', function: fn };
}

/** A custom tool becomes a function of one string argument, `input`; its grammar, if any, is told in the description. */
function customTool(tool: Record<string, unknown>, at: string): OpenAITool {
  const name = toolName(tool, at);
  if (tool.description != null && typeof tool.description !== 'string') throw invalidField(`${at}.description`, `${at}.description must be a string.`);
  const description = (tool.description as string | undefined) || undefined;
  let inputDescription: string | undefined;
  const format = tool.format;
  if (format != null) {
    if (!isObject(format) || (format.type !== 'text' && format.type !== 'grammar')) {
      throw invalidField(`${at}.format`, `${at}.format must be {"type": "text"} or {"type": "grammar", "syntax", "definition"}.`);
    }
    if (format.type === 'grammar') {
      if (typeof format.definition !== 'string' || !format.definition) throw invalidField(`${at}.format.definition`, `${at}.format.definition must be the grammar's text.`);
      if (format.syntax !== 'lark' && format.syntax !== 'regex') throw invalidField(`${at}.format.syntax`, `${at}.format.syntax must be "lark" or "regex".`);
      // The target cannot constrain sampling to the grammar; the model reads it instead.
      inputDescription = `The raw input, which must match this ${format.syntax === 'lark' ? 'Lark grammar' : 'regular expression'}:\n${format.definition}`;
    }
  }
  const fn: OpenAITool['function'] = { name, parameters: INPUT_SCHEMA(inputDescription) };
  if (description) fn.description = description;
  return { type: 'function', function: fn };
}

/** A web search tool's options -> chat's web_search_options; its other fields (filters, external_web_access, search_content_types) are hints. */
function webSearchOptions(tool: Record<string, unknown>, at: string): OpenAIWebSearchOptions {
  const out: OpenAIWebSearchOptions = {};
  const size = tool.search_context_size;
  if (size != null) {
    if (size !== 'low' && size !== 'medium' && size !== 'high') throw invalidField(`${at}.search_context_size`, `${at}.search_context_size must be "low", "medium" or "high".`);
    out.search_context_size = size;
  }
  const where = tool.user_location;
  if (where != null) {
    const param = `${at}.user_location`;
    if (!isObject(where) || (where.type != null && where.type !== 'approximate')) {
      throw invalidField(param, `${param} must be an object such as {"type": "approximate", "country": "US", "city": "Boston"}.`);
    }
    const approximate: OpenAIApproximateLocation = {};
    for (const key of ['city', 'country', 'region', 'timezone'] as const) {
      const value = where[key];
      if (value == null) continue;
      if (typeof value !== 'string') throw invalidField(`${param}.${key}`, `${param}.${key} must be a string.`);
      if (value) approximate[key] = value;
    }
    if (Object.keys(approximate).length > 0) out.user_location = { type: 'approximate', approximate };
  }
  return out;
}

interface PickedChoice {
  choice?: OpenAIToolChoice;
  /** allowed_tools: the chat names the model may call. */
  allowed?: Set<string>;
  /** Whether the model may search the web (when the request offers web search and the target runs it). */
  search: boolean;
}

/**
 * `dropped`: the built-in tools the target cannot run; `searchOffered`: the request has a web search tool the target may
 * run (unless it runs it only without client tools and some are sent: then it is dropped after the choice is made);
 * `targetSearches`: the target has a web search of its own.
 */
function convertToolChoice(choice: unknown, tools: OpenAITool[], dropped: string[], index: ClientToolIndex, searchOffered: boolean, targetSearches: boolean): PickedChoice {
  if (choice == null) return { search: true };
  if (choice === 'auto') return tools.length > 0 ? { choice, search: true } : { search: true };
  const droppedNote = dropped.length > 0 ? ` (the built-in tools ${dropped.map((d) => `"${d}"`).join(', ')} cannot run on the target provider and were left out)` : '';
  // "none": no tool at all, web search included.
  if (choice === 'none') return tools.length > 0 ? { choice, search: false } : { search: false };
  if (choice === 'required') {
    if (tools.length === 0 && !searchOffered) {
      throw invalidField('tool_choice', `tool_choice "required" needs a tool the model can call, but the request has no function or custom tools${droppedNote}; add one or set tool_choice to "auto".`);
    }
    return { choice, search: true };
  }
  if (typeof choice === 'string') throw invalidField('tool_choice', 'tool_choice must be "auto", "none", "required" or an object such as {"type": "function", "name": "..."}.');
  if (!isObject(choice) || typeof choice.type !== 'string') throw invalidField('tool_choice', 'tool_choice must be "auto", "none", "required" or an object with a "type".');
  switch (choice.type) {
    case 'function':
    case 'custom': {
      if (typeof choice.name !== 'string' || !choice.name) throw invalidField('tool_choice.name', `tool_choice.name must name one of the ${choice.type} tools.`);
      const chatName = chatNameOf(choice.name, choice.type, index);
      if (!chatName || !tools.some((t) => t.function.name === chatName)) {
        throw invalidField('tool_choice.name', `tool_choice.name "${choice.name}" names no ${choice.type} tool of the request; name one of tools, or set tool_choice to "auto".`);
      }
      return { choice: { type: 'function', function: { name: chatName } }, search: true };
    }
    case 'allowed_tools': {
      if (choice.mode !== 'auto' && choice.mode !== 'required') throw invalidField('tool_choice.mode', 'tool_choice.mode must be "auto" or "required".');
      if (!Array.isArray(choice.tools)) throw invalidField('tool_choice.tools', 'tool_choice.tools must be an array of tools the model may call, such as {"type": "function", "name": "..."}.');
      const allowed = new Set<string>();
      const droppedAllowed: string[] = [];
      let search = false;
      choice.tools.forEach((t, k) => {
        const at = `tool_choice.tools.${k}`;
        if (!isObject(t) || typeof t.type !== 'string') throw invalidField(at, `${at} must be a tool reference such as {"type": "function", "name": "..."}.`);
        if (t.type === 'function' || t.type === 'custom') {
          const chatName = typeof t.name === 'string' ? chatNameOf(t.name, t.type, index) : undefined;
          if (!chatName) throw invalidField(`${at}.name`, `${at}.name must name one of the request's ${t.type} tools.`);
          allowed.add(chatName);
        } else if (searchOffered && isWebSearchTool(t.type)) search = true;
        else droppedAllowed.push(t.type);
      });
      if (choice.mode === 'required' && allowed.size === 0 && !search) {
        throw invalidField('tool_choice', `tool_choice requires one of ${droppedAllowed.map((d) => `"${d}"`).join(', ') || 'no tools'}, built-in tools the target provider cannot run; allow a function or custom tool, set the mode to "auto", or route to an OpenAI model.`);
      }
      return { choice: choice.mode, allowed, search };
    }
    default:
      if (isWebSearchTool(choice.type) && targetSearches) {
        if (!searchOffered) throw invalidField('tool_choice', `tool_choice requires "${choice.type}", but tools has no web search tool; add {"type": "${choice.type}"} to tools or set tool_choice to "auto".`);
        // Web search and nothing else: no client tool is sent, and a tool is required.
        return { choice: 'required', allowed: new Set(), search: true };
      }
      // file_search, web_search(_preview), computer_use_preview, code_interpreter, image_generation, mcp, shell, apply_patch, ...
      throw invalidField('tool_choice', `tool_choice requires the built-in tool "${choice.type}", which the target provider cannot run; set tool_choice to "auto" (the tool is then left out) or route to an OpenAI model.`);
  }
}

/** A tool_choice name -> its chat name: the name itself, or `<namespace>__<name>` when only a namespaced tool has it. */
function chatNameOf(name: string, kind: 'function' | 'custom', index: ClientToolIndex): string | undefined {
  const direct = index.get(name);
  if (direct && direct.kind === kind) return name;
  for (const [chatName, ref] of index) {
    if (ref.kind === kind && (ref.name === name || `${ref.namespace}.${ref.name}` === name)) return chatName;
  }
  return undefined;
}
