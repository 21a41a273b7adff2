// The Responses response object agentgw answers with on a translated call (plain and streamed), its usage, its item ids.
import type { Usage } from '../providers/spec.js';
import type {
  ResponsesEcho,
  ResponsesError,
  ResponsesFunctionTool,
  ResponsesOutputItem,
  ResponsesReasoningEffort,
  ResponsesResponse,
  ResponsesStatus,
  ResponsesTool,
  ResponsesToolChoice,
  ResponsesUsage,
} from './responses-api.js';

export interface ResponsesObjectOptions {
  /** The id agentgw minted (`resp_...`). */
  id: string;
  /** The model the client asked for. */
  model: string;
  /** Unix seconds. */
  createdAt: number;
  /** The request's fields that the response repeats. */
  request: ResponsesEcho;
}

export interface ResponsesObjectState {
  status: ResponsesStatus;
  output: ResponsesOutputItem[];
  usage: ResponsesUsage | null;
  completedAt?: number | null;
  error?: ResponsesError | null;
  incompleteReason?: 'max_output_tokens' | 'content_filter' | null;
}

/** The gateway's Usage -> Responses usage: input_tokens include cached ones, output_tokens reasoning ones (as in chat). */
export function responsesUsage(usage: Usage): ResponsesUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.cached_prompt_tokens ?? 0, cache_write_tokens: usage.cache_write_prompt_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
}

/** `<prefix>_<response id without resp_>_<n>`: unique with the response id, stable for one response. */
export function itemId(prefix: 'msg' | 'fc' | 'ctc' | 'rs', responseId: string, n: number): string {
  const base = responseId.startsWith('resp_') ? responseId.slice('resp_'.length) : responseId;
  return `${prefix}_${base}_${n}`;
}

/** The call id of a tool call the upstream gave none. */
export function callId(responseId: string, n: number): string {
  const base = responseId.startsWith('resp_') ? responseId.slice('resp_'.length) : responseId;
  return `call_${base}_${n}`;
}

/** The response object, with the request's settings as OpenAI repeats them (its defaults where the client sent none). */
export function responsesObject(opts: ResponsesObjectOptions, state: ResponsesObjectState): ResponsesResponse {
  const r = opts.request;
  return {
    id: opts.id,
    object: 'response',
    created_at: opts.createdAt,
    status: state.status,
    completed_at: state.completedAt ?? null,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason ? { reason: state.incompleteReason } : null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    model: opts.model,
    output: state.output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    reasoning: { effort: (r.reasoning?.effort ?? null) as ResponsesReasoningEffort | null, summary: r.reasoning?.summary ?? r.reasoning?.generate_summary ?? null },
    store: r.store ?? true,
    // The sampling settings in effect: the client's, else the defaults every target applies (as OpenAI reports them).
    temperature: r.temperature ?? 1,
    text: echoedText(r.text),
    tool_choice: (r.tool_choice ?? 'auto') as ResponsesToolChoice,
    tools: echoedTools(r.tools),
    top_p: r.top_p ?? 1,
    presence_penalty: r.presence_penalty ?? 0,
    frequency_penalty: r.frequency_penalty ?? 0,
    top_logprobs: r.top_logprobs ?? 0,
    max_tool_calls: r.max_tool_calls ?? null,
    truncation: r.truncation ?? 'disabled',
    usage: state.usage,
    user: r.user ?? null,
    metadata: r.metadata ?? {},
    background: false,
    service_tier: 'default',
    prompt_cache_key: r.prompt_cache_key ?? null,
    safety_identifier: r.safety_identifier ?? null,
  };
}

/** The text settings as a response repeats them: always a format, a json_schema one with every field of OpenAI's (description, strict). */
function echoedText(text: ResponsesEcho['text']): ResponsesResponse['text'] {
  if (!text) return { format: { type: 'text' } };
  const format = text.format as Record<string, unknown> | null | undefined;
  // Codex sends only text.verbosity: the format in effect is plain text.
  if (format == null) return { ...text, format: { type: 'text' } };
  if (format.type !== 'json_schema') return text;
  return { ...text, format: { ...format, description: format.description ?? null, strict: format.strict ?? false } } as ResponsesResponse['text'];
}

/**
 * The request's tools as a response repeats them: a function tool with every field of OpenAI's (and the Open Responses)
 * tool object, `strict` as applied (a translated call is strict only when the client said so); other tools as sent.
 */
function echoedTools(tools: ResponsesEcho['tools']): ResponsesTool[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((tool) => {
    if (tool === null || typeof tool !== 'object' || tool.type !== 'function') return tool;
    const fn = tool as ResponsesFunctionTool;
    return { ...fn, description: fn.description ?? null, parameters: fn.parameters ?? null, strict: fn.strict ?? false };
  });
}

/** What the Open Responses specification requires of every response object (its ResponseResource). */
const REQUIRED_RESPONSE_FIELDS = [
  'id', 'object', 'created_at', 'completed_at', 'status', 'incomplete_details', 'model', 'previous_response_id', 'instructions',
  'output', 'error', 'tools', 'tool_choice', 'truncation', 'parallel_tool_calls', 'text', 'top_p', 'presence_penalty',
  'frequency_penalty', 'top_logprobs', 'temperature', 'reasoning', 'usage', 'max_output_tokens', 'max_tool_calls', 'store',
  'background', 'service_tier', 'metadata', 'safety_identifier', 'prompt_cache_key',
] as const;

/**
 * A native upstream's response object with what the Open Responses specification requires and it left out (an older
 * API version's, an OpenAI-compatible server's): the request's setting, else the default in effect; a function tool
 * without description, parameters or strict says null. Null when nothing is missing: the object stays as sent.
 */
export function withRequiredFields(response: Record<string, unknown>, request: ResponsesEcho): Record<string, unknown> | null {
  let out: Record<string, unknown> | null = null;
  let defaults: Record<string, unknown> | null = null;
  for (const key of REQUIRED_RESPONSE_FIELDS) {
    if (Object.prototype.hasOwnProperty.call(response, key)) continue;
    defaults ??= responsesObject({ id: '', model: '', createdAt: 0, request }, { status: 'completed', output: [], usage: null }) as unknown as Record<string, unknown>;
    (out ??= { ...response })[key] = defaults[key] ?? null;
  }
  const tools = (out ?? response).tools;
  const incomplete = (t: unknown) => isFunctionTool(t) && (t.description === undefined || t.parameters === undefined || t.strict === undefined);
  if (Array.isArray(tools) && tools.some(incomplete)) {
    (out ??= { ...response }).tools = tools.map((t) => (incomplete(t) ? { description: null, parameters: null, strict: null, ...(t as object) } : t));
  }
  return out;
}

function isFunctionTool(t: unknown): t is Record<string, unknown> {
  return typeof t === 'object' && t !== null && (t as { type?: unknown }).type === 'function';
}

/**
 * Stream frames with withRequiredFields applied to the response snapshot of each event that has one (created,
 * in_progress, completed, ...); frames without one, and snapshots that lack nothing, stay byte for byte as they came.
 */
export function withRequiredSnapshotFields(frames: string, request: ResponsesEcho): string {
  return new SnapshotFields(request).frames(frames);
}

function withSnapshotFields(frame: string, request: ResponsesEcho): string {
  const lines = frame.split('\n');
  const dataAt = lines.findIndex((l) => l.startsWith('data:'));
  if (dataAt === -1 || lines.slice(dataAt + 1).some((l) => l.startsWith('data:'))) return frame;
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(lines[dataAt].slice(5)) as Record<string, unknown>;
  } catch {
    return frame;
  }
  const response = event.response;
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return frame;
  const filled = withRequiredFields(response as Record<string, unknown>, request);
  if (!filled) return frame;
  lines[dataAt] = `data: ${JSON.stringify({ ...event, response: filled })}`;
  return lines.join('\n');
}

/**
 * withRequiredSnapshotFields for the snapshots of one stream, without parsing each: a snapshot echoes the request's
 * instructions and tools (often tens of KB), and parsing and writing three of them again cost more than the rest of the
 * request. The first snapshot is parsed: what it lacks is what the stream's snapshots lack (an upstream writes every
 * snapshot of a response with the same fields). Later ones get the same additions as text, before the response's `}`,
 * when a scan of their structure (strings skipped, not parsed) finds the response the last member of the event, its
 * members named without escapes and lacking exactly what the first lacked; anything else (other keys, an escaped name,
 * the response not last or not alone of its name, function tools to complete) goes the parsing way.
 */
export class SnapshotFields {
  /** After the first snapshot: the text added to each (empty when nothing lacks), or null when every snapshot is parsed. */
  private added: string | null | undefined = undefined;
  /** The keys the first snapshot lacked, in the order withRequiredFields adds them. */
  private missing: readonly string[] = [];

  constructor(private readonly request: ResponsesEcho) {}

  frames(frames: string): string {
    if (this.added === '' || !frames.includes('"response":{')) return frames;
    let out = '';
    let from = 0;
    while (from < frames.length) {
      const end = frames.indexOf('\n\n', from);
      const stop = end === -1 ? frames.length : end + 2;
      const frame = frames.slice(from, stop);
      out += frame.includes('"response":{') ? this.frame(frame) : frame;
      from = stop;
    }
    return out;
  }

  private frame(frame: string): string {
    if (this.added === '') return frame;
    const lines = frame.split('\n');
    const dataAt = lines.findIndex((l) => l.startsWith('data:'));
    if (dataAt === -1 || lines.slice(dataAt + 1).some((l) => l.startsWith('data:'))) return frame;
    const line = lines[dataAt]!;
    if (this.added) {
      const shape = responseMembers(line);
      if (shape !== null && sameKeys(lackingOf(shape.keys), this.missing)) {
        lines[dataAt] = line.slice(0, shape.at) + this.added + line.slice(shape.at);
        return lines.join('\n');
      }
      return withSnapshotFields(frame, this.request);
    }
    if (this.added === null) return withSnapshotFields(frame, this.request);
    // The first snapshot: parsed, and what it lacks learned.
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line.slice(5)) as Record<string, unknown>;
    } catch {
      return frame;
    }
    const response = event.response;
    if (typeof response !== 'object' || response === null || Array.isArray(response)) return frame;
    const filled = withRequiredFields(response as Record<string, unknown>, this.request);
    const keys = Object.keys(event);
    const responseKeys = Object.keys(response);
    const toolsChanged = filled !== null && filled.tools !== (response as Record<string, unknown>).tools;
    const at = responseMembers(line)?.at ?? -1;
    if (toolsChanged || keys[keys.length - 1] !== 'response' || keys.some(isIndexKey) || responseKeys.length === 0 || at === -1) {
      this.added = null;
      if (!filled) return frame;
      lines[dataAt] = `data: ${JSON.stringify({ ...event, response: filled })}`;
      return lines.join('\n');
    }
    const missing = filled ? Object.keys(filled).slice(responseKeys.length) : [];
    this.added = missing.map((k) => `,${JSON.stringify(k)}:${JSON.stringify(filled![k])}`).join('');
    if (!this.added) return frame;
    this.missing = missing;
    lines[dataAt] = line.slice(0, at) + this.added + line.slice(at);
    return lines.join('\n');
  }
}

/** An integer-like key, which JSON.parse puts first whatever its place in the text. */
function isIndexKey(k: string): boolean {
  return /^(0|[1-9]\d*)$/.test(k);
}

/** The required keys not among `keys`, in the order withRequiredFields adds them. */
function lackingOf(keys: ReadonlySet<string>): string[] {
  return REQUIRED_RESPONSE_FIELDS.filter((k) => !keys.has(k));
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

/**
 * In `data: {...,"response":{...}}`: the index of the response's closing `}` and its members' names, when the response
 * is a non-empty object, the event's last member and its only one of that name, and no name of the event or of the
 * response is written with an escape; else null. Strings are skipped with indexOf, not read; nothing is parsed.
 */
function responseMembers(line: string): { at: number; keys: Set<string> } | null {
  let i = 5;
  while (i < line.length && isJsonSpace(line.charCodeAt(i))) i++;
  if (line.charCodeAt(i) !== 0x7b) return null;
  /** Per open container: true for an object. */
  const objects: boolean[] = [];
  let keyNext = false;
  let inResponse = false;
  let responseNext = false;
  let seenResponse = false;
  const keys = new Set<string>();
  for (; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(line, i);
      if (end === -1) return null;
      const depth = objects.length;
      if (keyNext && (depth === 1 || (depth === 2 && inResponse))) {
        const key = line.slice(i + 1, end);
        if (key.includes('\\')) return null;
        if (depth === 2) keys.add(key);
        else if (seenResponse) return null;
        else if (key === 'response') responseNext = seenResponse = true;
      } else if (responseNext) return null;
      keyNext = false;
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (responseNext) {
        if (c !== 0x7b) return null;
        inResponse = true;
        responseNext = false;
      }
      objects.push(c === 0x7b);
      keyNext = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      objects.pop();
      keyNext = false;
      if (inResponse && objects.length === 1) {
        if (keys.size === 0) return null;
        // Nothing after the response but the event's closing brace.
        let j = i + 1;
        while (j < line.length && isJsonSpace(line.charCodeAt(j))) j++;
        if (line.charCodeAt(j) !== 0x7d) return null;
        j++;
        while (j < line.length && isJsonSpace(line.charCodeAt(j))) j++;
        return j === line.length ? { at: i, keys } : null;
      }
      if (objects.length === 0) return null;
    } else if (c === 0x2c) {
      keyNext = objects[objects.length - 1] === true;
    } else if (responseNext && !isJsonSpace(c) && c !== 0x3a) {
      // The response is a number, true, false or null.
      return null;
    }
  }
  return null;
}

/** The index of the `"` that closes the string opening at `from`, else -1. */
function stringEnd(line: string, from: number): number {
  let at = from + 1;
  for (;;) {
    const q = line.indexOf('"', at);
    if (q === -1) return -1;
    let backslashes = 0;
    while (line.charCodeAt(q - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return q;
    at = q + 1;
  }
}

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * An agentgw error code -> the `code` of a Responses error (response.failed, error event). Codex reads
 * rate_limit_exceeded (retries), insufficient_quota (stops: budgets) and context_length_exceeded (compacts).
 */
export function responsesErrorCode(code: string): string {
  switch (code) {
    case 'rpm_exceeded':
    case 'tpm_exceeded':
    case 'upstream_rate_limited':
      return 'rate_limit_exceeded';
    case 'daily_budget_exceeded':
    case 'monthly_budget_exceeded':
    case 'trace_budget_exceeded':
    case 'tenant_daily_budget_exceeded':
    case 'tenant_monthly_budget_exceeded':
      return 'insufficient_quota';
    case 'context_length_exceeded':
      return code;
    default:
      return 'server_error';
  }
}

/** The OpenAI error type of a Responses error code (see responsesErrorCode). */
function responsesErrorType(code: string): string {
  switch (code) {
    case 'rate_limit_exceeded':
      return 'rate_limit_error';
    case 'insufficient_quota':
      return 'insufficient_quota';
    case 'context_length_exceeded':
      return 'invalid_request_error';
    default:
      return 'server_error';
  }
}

/**
 * The `error` stream event: OpenAI's fields (code, message, param) and the same as an `error` object, as the Open
 * Responses specification has it (the openai SDK rejects the stream with an APIError made from that object).
 */
export function responsesErrorEvent(sequence: number, code: string, message: string): Record<string, unknown> {
  return { type: 'error', sequence_number: sequence, code, message, param: null, error: { type: responsesErrorType(code), code, message, param: null } };
}
