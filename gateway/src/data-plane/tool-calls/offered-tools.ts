// Unconditional denies (CONTRACT: "Tool rules and approvals"): a tool some policy denies with no `when` is left out of
// the tools the request offers, and a provider-side tool denied that way is never turned on, so the model does not try it.
import type { ToolRules } from '../../policy/tool-rules.js';

type Json = Record<string, unknown>;

/** The name the rules know an offered Responses tool by (built-in tools by their kind). */
const RESPONSES_KIND: Record<string, string> = {
  web_search: 'web_search',
  web_search_preview: 'web_search',
  web_search_2025_08_26: 'web_search',
  web_search_preview_2025_03_11: 'web_search',
  computer_use_preview: 'computer',
  computer: 'computer',
  local_shell: 'local_shell',
  shell: 'shell',
  apply_patch: 'apply_patch',
};

function responsesToolName(tool: Json): string | null {
  const type = typeof tool.type === 'string' ? tool.type : '';
  if (type === 'function' || type === 'custom') return typeof tool.name === 'string' ? tool.name : null;
  if (type === 'mcp') return `mcp/${String(tool.server_label ?? '')}/*`;
  // A provider-side tool without a call kind of its own (code_interpreter, file_search, image_generation) is known by its type.
  return RESPONSES_KIND[type] ?? (type || null);
}

function chatToolName(tool: Json): string | null {
  const fn = tool.function as Json | undefined;
  if (typeof fn?.name === 'string') return fn.name;
  const custom = tool.custom as Json | undefined;
  return typeof custom?.name === 'string' ? custom.name : null;
}

function messagesToolName(tool: Json): string | null {
  return typeof tool.name === 'string' ? tool.name : null;
}

/** A tool_choice that names a tool no longer offered is left out too (the upstream would refuse it). */
function choiceNames(choice: unknown): string | null {
  if (!choice || typeof choice !== 'object') return null;
  const c = choice as Json;
  if (typeof c.name === 'string') return c.name;
  const fn = c.function as Json | undefined;
  return typeof fn?.name === 'string' ? fn.name : null;
}

/**
 * The body with the outright-denied tools left out (the same object when none is; a copy otherwise, so the client's body
 * is never changed in place). With no tool left, `tools` and what only goes with it are left out as well.
 */
export function withoutDeniedTools<B extends Json>(body: B, rules: ToolRules, dialect: 'chat' | 'messages' | 'responses'): B {
  const tools = body.tools;
  const nameOf = dialect === 'chat' ? chatToolName : dialect === 'messages' ? messagesToolName : responsesToolName;
  let out: Json = body;
  if (Array.isArray(tools)) {
    const kept = (tools as Json[]).filter((t) => {
      const name = t && typeof t === 'object' ? nameOf(t) : null;
      return name === null || !rules.deniesOutright(name);
    });
    if (kept.length !== tools.length) {
      out = { ...body, tools: kept };
      const chosen = choiceNames(body.tool_choice);
      if (chosen !== null && !kept.some((t) => nameOf(t) === chosen)) delete out.tool_choice;
      if (kept.length === 0) {
        delete out.tools;
        delete out.tool_choice;
        if (dialect !== 'messages') delete out.parallel_tool_calls;
      }
    }
  }
  // Chat's provider-side search is a field of its own.
  if (dialect === 'chat' && body.web_search_options !== undefined && rules.deniesOutright('web_search')) {
    if (out === body) out = { ...body };
    delete out.web_search_options;
  }
  return out as B;
}
