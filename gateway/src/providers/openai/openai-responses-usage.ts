// The usage of a Responses API answer (OpenAI, Azure OpenAI) in the gateway's terms, estimated where the upstream is silent.
import { countTokens } from '../shared/count-tokens.js';
import type { ReportedUsage } from '../shared/stream-meter.js';
import type { ResponsesCallContext, Usage } from '../spec.js';

/** The `usage` object of a Responses API response. */
export interface ResponsesApiUsage {
  input_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens?: number;
  output_tokens_details?: { reasoning_tokens?: number } | null;
  total_tokens?: number;
}

/** What a Responses usage object reports, field by field (absent numbers stay absent, to be estimated). */
export function fromResponsesUsage(usage: unknown): ReportedUsage {
  if (!usage || typeof usage !== 'object') return {};
  const u = usage as ResponsesApiUsage;
  const out: ReportedUsage = {};
  if (typeof u.input_tokens === 'number') out.prompt_tokens = u.input_tokens;
  if (typeof u.output_tokens === 'number') out.completion_tokens = u.output_tokens;
  const cached = u.input_tokens_details?.cached_tokens;
  if (typeof cached === 'number') out.cached_prompt_tokens = cached;
  const reasoning = u.output_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') out.reasoning_tokens = reasoning;
  return out;
}

/** The web searches a response's output shows OpenAI ran (`web_search_call` items), each billed per call. */
export function webSearchCalls(output: unknown): number {
  if (!Array.isArray(output)) return 0;
  let n = 0;
  for (const item of output as OutputItem[]) if (item?.type === 'web_search_call') n++;
  return n;
}

/** What a response object reports: its usage and the web searches its output shows. */
export function fromResponse(response: { usage?: unknown; output?: unknown }): ReportedUsage {
  const reported = fromResponsesUsage(response.usage);
  const searches = webSearchCalls(response.output);
  if (searches > 0) reported.web_search_calls = searches;
  return reported;
}

/** Usage of a whole response object: as reported, the missing counts estimated (prompt from the request, output from its items). */
export function responsesUsage(response: Record<string, unknown>, ctx: ResponsesCallContext): Usage {
  const reported = fromResponse(response);
  const promptKnown = reported.prompt_tokens !== undefined;
  const completionKnown = reported.completion_tokens !== undefined;
  const usage: Usage = {
    ...reported,
    prompt_tokens: promptKnown ? reported.prompt_tokens! : ctx.estimatePromptTokens(),
    completion_tokens: completionKnown ? reported.completion_tokens! : countTokens(responsesOutputText(response.output)),
    estimated: !(promptKnown && completionKnown),
  };
  return usage;
}

interface OutputItem {
  type?: string;
  name?: string;
  arguments?: string;
  input?: string;
  content?: Array<{ type?: string; text?: string; refusal?: string }>;
  summary?: Array<{ text?: string }>;
}

/** The text a response's output items carry (messages, refusals, tool calls, reasoning), for estimates. */
export function responsesOutputText(output: unknown): string {
  if (!Array.isArray(output)) return '';
  let text = '';
  for (const item of output as OutputItem[]) {
    if (!item || typeof item !== 'object') continue;
    if (typeof item.name === 'string') text += item.name;
    if (typeof item.arguments === 'string') text += item.arguments;
    if (typeof item.input === 'string') text += item.input;
    for (const part of Array.isArray(item.content) ? item.content : []) text += part?.text ?? part?.refusal ?? '';
    for (const part of Array.isArray(item.summary) ? item.summary : []) text += part?.text ?? '';
  }
  return text;
}
