// The most web searches a request lets the provider run and bill (Anthropic's web search tool, OpenAI's web_search),
// for the worst case of a reservation or cost cap. Read from the body by endpoint; it belongs on the policy views.
import type { Endpoint } from './policy-view.js';

/** Searches reserved for a web search tool that sets no limit (Anthropic's `max_uses`, OpenAI's `max_tool_calls`). */
export const UNBOUNDED_WEB_SEARCHES = 10;

/** web_search, web_search_preview and their dated versions (Responses); web_search_20250305 and later (Messages). */
const RESPONSES_WEB_SEARCH = /^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$/;
const MESSAGES_WEB_SEARCH = /^web_search_\d{8}$/;

function limit(n: unknown): number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : UNBOUNDED_WEB_SEARCHES;
}

function toolTypes(tools: unknown): Array<Record<string, unknown>> {
  if (!Array.isArray(tools)) return [];
  return tools.filter((t): t is Record<string, unknown> => t !== null && typeof t === 'object' && typeof (t as { type?: unknown }).type === 'string');
}

export function webSearchesUpperBound(endpoint: Endpoint, body: Record<string, unknown>): number {
  switch (endpoint) {
    case 'messages': {
      // Each web search tool has its own max_uses.
      let n = 0;
      for (const t of toolTypes(body.tools)) if (MESSAGES_WEB_SEARCH.test(t.type as string)) n += limit(t.max_uses);
      return n;
    }
    case 'responses':
      // max_tool_calls bounds every built-in tool call of the response together.
      return toolTypes(body.tools).some((t) => RESPONSES_WEB_SEARCH.test(t.type as string)) ? limit(body.max_tool_calls) : 0;
    case 'chat.completions':
      // Search models search once; a target that runs its own web search tool for it (Anthropic) sets no limit.
      return body.web_search_options !== undefined && body.web_search_options !== null ? UNBOUNDED_WEB_SEARCHES : 0;
    case 'gemini':
      // Google Search grounding (googleSearch, google_search, googleSearchRetrieval) sets no limit of its own.
      return Array.isArray(body.tools) && body.tools.some((t) => t !== null && typeof t === 'object' && Object.keys(t).some((k) => /^google_?search/i.test(k))) ? UNBOUNDED_WEB_SEARCHES : 0;
    default:
      return 0;
  }
}
