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
  const d = REQUIRED_DEFAULTS;
  return {
    id: opts.id,
    object: 'response',
    created_at: opts.createdAt,
    status: state.status,
    completed_at: state.completedAt ?? null,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason ? { reason: state.incompleteReason } : null,
    instructions: d.instructions(r),
    max_output_tokens: d.max_output_tokens(r),
    model: opts.model,
    output: state.output,
    parallel_tool_calls: d.parallel_tool_calls(r),
    previous_response_id: d.previous_response_id(r),
    reasoning: d.reasoning(r),
    store: d.store(r),
    temperature: d.temperature(r),
    text: d.text(r),
    tool_choice: d.tool_choice(r),
    tools: d.tools(r),
    top_p: d.top_p(r),
    presence_penalty: d.presence_penalty(r),
    frequency_penalty: d.frequency_penalty(r),
    top_logprobs: d.top_logprobs(r),
    max_tool_calls: d.max_tool_calls(r),
    truncation: d.truncation(r),
    usage: state.usage,
    user: r.user ?? null,
    metadata: d.metadata(r),
    background: false,
    service_tier: d.service_tier(r),
    prompt_cache_key: d.prompt_cache_key(r),
    safety_identifier: d.safety_identifier(r),
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

type RequiredField = (typeof REQUIRED_RESPONSE_FIELDS)[number];

/**
 * What each required field says when a response lacks it, one field at a time: the request's setting, else the default
 * in effect (as OpenAI reports them; the sampling settings are those every target applies). responsesObject repeats the
 * request with the same ones.
 */
const REQUIRED_DEFAULTS: { [K in RequiredField]: (r: ResponsesEcho) => ResponsesResponse[K] } = {
  id: () => '',
  object: () => 'response',
  created_at: () => 0,
  completed_at: () => null,
  status: () => 'completed',
  incomplete_details: () => null,
  model: () => '',
  previous_response_id: (r) => r.previous_response_id ?? null,
  instructions: (r) => r.instructions ?? null,
  output: () => [],
  error: () => null,
  tools: (r) => echoedTools(r.tools),
  tool_choice: (r) => (r.tool_choice ?? 'auto') as ResponsesToolChoice,
  truncation: (r) => r.truncation ?? 'disabled',
  parallel_tool_calls: (r) => r.parallel_tool_calls ?? true,
  text: (r) => echoedText(r.text),
  top_p: (r) => r.top_p ?? 1,
  presence_penalty: (r) => r.presence_penalty ?? 0,
  frequency_penalty: (r) => r.frequency_penalty ?? 0,
  top_logprobs: (r) => r.top_logprobs ?? 0,
  temperature: (r) => r.temperature ?? 1,
  reasoning: (r) => ({ effort: (r.reasoning?.effort ?? null) as ResponsesReasoningEffort | null, summary: r.reasoning?.summary ?? r.reasoning?.generate_summary ?? null }),
  usage: () => null,
  max_output_tokens: (r) => r.max_output_tokens ?? null,
  max_tool_calls: (r) => r.max_tool_calls ?? null,
  store: (r) => r.store ?? true,
  background: () => false,
  service_tier: () => 'default',
  metadata: (r) => r.metadata ?? {},
  safety_identifier: (r) => r.safety_identifier ?? null,
  prompt_cache_key: (r) => r.prompt_cache_key ?? null,
};

/** What a required field says when the response lacks it (only the lacking ones are made). */
function requiredDefault(key: RequiredField, request: ResponsesEcho): unknown {
  return REQUIRED_DEFAULTS[key](request) ?? null;
}

/**
 * A native upstream's response object with what the Open Responses specification requires and it left out (an older
 * API version's, an OpenAI-compatible server's): the request's setting, else the default in effect; a function tool
 * without description, parameters or strict says null. Null when nothing is missing: the object stays as sent.
 * `inPlace`: the additions are made to `response` itself (a copy the caller made), which is returned.
 */
export function withRequiredFields(response: Record<string, unknown>, request: ResponsesEcho, inPlace = false): Record<string, unknown> | null {
  let out: Record<string, unknown> | null = null;
  for (const key of REQUIRED_RESPONSE_FIELDS) {
    if (Object.prototype.hasOwnProperty.call(response, key)) continue;
    // (The request's tools are copied only when the response lacks its own.)
    (out ??= inPlace ? response : { ...response })[key] = requiredDefault(key, request);
  }
  const tools = (out ?? response).tools;
  const incomplete = (t: unknown) => isFunctionTool(t) && FUNCTION_TOOL_FIELDS.some((k) => t[k] === undefined);
  if (Array.isArray(tools) && tools.some(incomplete)) {
    (out ??= inPlace ? response : { ...response }).tools = tools.map((t) => (incomplete(t) ? { description: null, parameters: null, strict: null, ...(t as object) } : t));
  }
  return out;
}

/** The members a function tool of a response must have (a response's tools missing one say null). */
const FUNCTION_TOOL_FIELDS = ['description', 'parameters', 'strict'] as const;

/** `keys` with their values as members added at the end of an object's JSON text: `,"k":v` each. */
function addedMembers<K extends string>(keys: readonly K[], valueOf: (key: K) => unknown): string {
  return keys.map((k) => `,${JSON.stringify(k)}:${JSON.stringify(valueOf(k))}`).join('');
}

function isFunctionTool(t: unknown): t is Record<string, unknown> {
  return typeof t === 'object' && t !== null && (t as { type?: unknown }).type === 'function';
}

/**
 * Stream frames with withRequiredFields applied to the response snapshot of each event that has one (created,
 * in_progress, completed, ...); frames without one, and snapshots that lack nothing, stay byte for byte as they came.
 */
export function withRequiredSnapshotFields(frames: string, request: ResponsesEcho): string {
  return new SnapshotFields(() => request).frames(frames);
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
  private echo: ResponsesEcho | undefined;

  /** `request`: the request's settings, asked for only when a snapshot lacks something. */
  constructor(private readonly request: () => ResponsesEcho) {}

  private get settings(): ResponsesEcho {
    return (this.echo ??= this.request());
  }

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
    // The frame's one data line (a frame of several is left to the parsing way).
    const start = frame.startsWith('data:') ? 0 : frame.indexOf('\ndata:') + 1;
    if (start === 0 && !frame.startsWith('data:')) return frame;
    const lineEnd = frame.indexOf('\n', start);
    const end = lineEnd === -1 ? frame.length : lineEnd;
    if (frame.includes('\ndata:', end)) return frame;
    const line = frame.slice(start, end);
    /** The frame with `text` inserted at `at` in its data line. */
    const inserted = (at: number, text: string) => frame.slice(0, start + at) + text + frame.slice(start + at);
    if (this.added) {
      const shape = responseMembers(line);
      if (shape !== null && sameKeys(lackingOf(shape.keys), this.missing)) return inserted(shape.at, this.added);
      return withSnapshotFields(frame, this.settings);
    }
    if (this.added === null) return withSnapshotFields(frame, this.settings);
    // The first snapshot. Its structure read as text, when that tells all: what it lacks comes from the request's
    // settings, not from its own values, so it needs no parse unless a function tool lacks members.
    const read = responseMembers(line);
    if (read !== null && !read.toolLacks && !read.indexKey) {
      if (read.tools) knowTools(line.slice(read.tools.start, read.tools.end));
      const missing = lackingOf(read.keys);
      this.added = '';
      if (missing.length === 0) return frame;
      this.added = addedMembers(missing, (k) => requiredDefault(k, this.settings));
      this.missing = missing;
      return inserted(read.at, this.added);
    }
    // Else parsed, and what it lacks learned.
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line.slice(5)) as Record<string, unknown>;
    } catch {
      return frame;
    }
    const response = event.response;
    if (typeof response !== 'object' || response === null || Array.isArray(response)) return frame;
    const filled = withRequiredFields(response as Record<string, unknown>, this.settings);
    const keys = Object.keys(event);
    const responseKeys = Object.keys(response);
    const toolsChanged = filled !== null && filled.tools !== (response as Record<string, unknown>).tools;
    const shape = responseMembers(line);
    const at = shape?.at ?? -1;
    if (shape?.tools && !toolsChanged && !shape.toolLacks) knowTools(line.slice(shape.tools.start, shape.tools.end));
    if (toolsChanged || keys[keys.length - 1] !== 'response' || keys.some(isIndexKey) || responseKeys.length === 0 || at === -1) {
      this.added = null;
      if (!filled) return frame;
      return `${frame.slice(0, start)}data: ${JSON.stringify({ ...event, response: filled })}${frame.slice(end)}`;
    }
    const missing = filled ? Object.keys(filled).slice(responseKeys.length) : [];
    this.added = addedMembers(missing, (k) => filled![k]);
    if (!this.added) return frame;
    this.missing = missing;
    return inserted(at, this.added);
  }
}

/** An integer-like key, which JSON.parse puts first whatever its place in the text. */
function isIndexKey(k: string): boolean {
  return /^(0|[1-9]\d*)$/.test(k);
}

/** The required keys not among `keys`, in the order withRequiredFields adds them. */
function lackingOf(keys: ReadonlySet<string>): RequiredField[] {
  return REQUIRED_RESPONSE_FIELDS.filter((k) => !keys.has(k));
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

interface ResponseShape {
  /** Where the response's closing `}` is. */
  at: number;
  /** The response's members. */
  keys: Set<string>;
  /** Where its `tools` value lies, when it is an array or object. */
  tools: { start: number; end: number } | null;
  /** True when a function tool of a `tools` array (as read here, not stepped over) lacks description, parameters or strict. */
  toolLacks: boolean;
  /** True when a member of the event has an integer-like name (JSON.parse would put it first). */
  indexKey: boolean;
}

/**
 * `tools` values of response snapshots read lately, most recent first: each read whole by responseMembers (strings
 * closed, brackets matched) with no function tool lacking a member. A response echoes its request's tools, and an
 * agent sends the same tools at every step: where a snapshot holds one of these texts at its `tools`, the scan steps
 * over it (the same bytes read the same way) instead of reading 10-40 KB again.
 */
const knownTools: string[] = [];
const KNOWN_TOOLS = 16;

function knowTools(text: string): void {
  const at = knownTools.indexOf(text);
  if (at === 0) return;
  if (at > 0) knownTools.splice(at, 1);
  else if (knownTools.length >= KNOWN_TOOLS) knownTools.pop();
  // A copy of its own, so that the frame it was cut from is not kept alive with it.
  knownTools.unshift(at > 0 ? text : (' ' + text).slice(1));
}

/** The known tools text that `line` holds from `i` on, if any (slice and ===, not startsWith: V8 compares those a character at a time). */
function knownToolsAt(line: string, i: number): string | undefined {
  for (const text of knownTools) {
    const end = i + text.length;
    if (end <= line.length && line.charCodeAt(end - 1) === text.charCodeAt(text.length - 1) && line.slice(i, end) === text) return text;
  }
  return undefined;
}

/**
 * In `data: {...,"response":{...}}`: the index of the response's closing `}` and its members' names, when the response
 * is a non-empty object, the event's last member and its only one of that name, and no name of the event or of the
 * response is written with an escape; else null. Strings are skipped with indexOf, not read; nothing is parsed. Also
 * where the response's `tools` array or object lies, and whether a function tool in it lacks a member; a `tools` value
 * that starts with a known text (knownTools) is stepped over unread.
 */
function responseMembers(line: string): ResponseShape | null {
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
  /** The response's `tools` key was just read (its value comes next), and where that value lies once read. */
  let toolsNext = false;
  let toolsAt = -1;
  let toolsSpan: { start: number; end: number } | null = null;
  /** Inside a `tools` array read here: the members of the tool object open at depth 4, and its `type` when a string. */
  let toolsArray = false;
  let toolKeys: Set<string> | null = null;
  let toolType: string | undefined;
  let typeNext = false;
  let toolLacks = false;
  let indexKey = false;
  for (; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(line, i);
      if (end === -1) return null;
      const depth = objects.length;
      toolsNext = false;
      if (keyNext && (depth === 1 || (depth === 2 && inResponse))) {
        const key = line.slice(i + 1, end);
        if (key.includes('\\')) return null;
        if (depth === 2) {
          keys.add(key);
          toolsNext = key === 'tools';
        } else if (seenResponse) return null;
        else if (key === 'response') responseNext = seenResponse = true;
        else if (isIndexKey(key)) indexKey = true;
      } else if (responseNext) return null;
      else if (toolKeys !== null && depth === 4) {
        if (keyNext) {
          const key = line.slice(i + 1, end);
          // A tool member named with an escape is read the parsing way.
          if (key.includes('\\')) toolLacks = true;
          toolKeys.add(key);
          typeNext = key === 'type';
        } else if (typeNext) {
          toolType = line.slice(i + 1, end);
          // An escaped type is read the parsing way.
          if (toolType.includes('\\')) toolLacks = true;
          typeNext = false;
        }
      }
      keyNext = false;
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (responseNext) {
        if (c !== 0x7b) return null;
        inResponse = true;
        responseNext = false;
      }
      if (toolsNext) {
        toolsNext = false;
        const known = knownToolsAt(line, i);
        if (known !== undefined) {
          // Tools read before, byte for byte: one whole value, no function tool lacking, after which the response goes on.
          toolsSpan = { start: i, end: i + known.length };
          i += known.length - 1;
          keyNext = false;
          continue;
        }
        toolsAt = i;
        toolsArray = c === 0x5b;
      } else if (toolsArray && c === 0x7b && objects.length === 3) {
        toolKeys = new Set();
        toolType = undefined;
      }
      typeNext = false;
      objects.push(c === 0x7b);
      keyNext = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      objects.pop();
      keyNext = false;
      typeNext = false;
      if (toolKeys !== null && objects.length === 3) {
        // A tool object ends: a function tool needs description, parameters and strict (an escaped name counts as none).
        if (toolType === 'function' && !FUNCTION_TOOL_FIELDS.every((k) => toolKeys!.has(k))) toolLacks = true;
        toolKeys = null;
      }
      if (toolsAt !== -1 && objects.length === 2) {
        toolsSpan = { start: toolsAt, end: i + 1 };
        toolsAt = -1;
        toolsArray = false;
      }
      if (inResponse && objects.length === 1) {
        if (keys.size === 0) return null;
        // Nothing after the response but the event's closing brace.
        let j = i + 1;
        while (j < line.length && isJsonSpace(line.charCodeAt(j))) j++;
        if (line.charCodeAt(j) !== 0x7d) return null;
        j++;
        while (j < line.length && isJsonSpace(line.charCodeAt(j))) j++;
        return j === line.length ? { at: i, keys, tools: toolsSpan, toolLacks, indexKey } : null;
      }
      if (objects.length === 0) return null;
    } else if (c === 0x2c) {
      keyNext = objects[objects.length - 1] === true;
      toolsNext = false;
      typeNext = false;
    } else if (toolsNext && !isJsonSpace(c) && c !== 0x3a) {
      // `tools` is a number, true, false or null.
      toolsNext = false;
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
