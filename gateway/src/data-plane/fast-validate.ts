/**
 * Hand-written, conservative pre-checks for the data-plane request bodies of request-schemas.ts.
 *
 * Contract: `fastValidChat(b) === true` implies `ChatCompletionRequest.safeParse(b)` succeeds with data deep-equal
 * to `b` (so the caller may use `b` itself); likewise `fastValidEmbeddings` for `EmbeddingsRequest`. `false` only
 * means "not proven": the caller runs zod, for the error message or for a valid shape this file does not cover.
 *
 * Scope of the contract: bodies made of primitives, arrays and objects whose properties are own, enumerable,
 * string-keyed data properties, i.e. everything JSON.parse (and any literal of plain values) produces. What breaks
 * that mould and is cheap to see is rejected: objects whose prototype is not Object.prototype (null-prototype
 * objects, class instances, Object.create({...}), other realms), arrays that are not plain Arrays, holes, own
 * `__proto__` keys (zod drops them from loose objects and records). `undefined` is accepted only where zod accepts it
 * and copies it back (an optional key of a loose object). Getters, Proxies, symbol keys, non-enumerable properties
 * and named (non-index) properties on arrays are out of scope: seeing them costs an allocation per object
 * (Object.getOwnPropertySymbols, Object.keys...), and a getter may answer differently each time it is read, which no
 * validator that reads the body can guard against. The gateway's body parser (secure-json-parse) produces none of them.
 *
 * zod 4 behaviours mirrored here (checked against node_modules/zod/v4/core):
 * - z.number() rejects NaN and ±Infinity; .int() requires Number.isSafeInteger; -0 passes min(0) and int().
 * - string .min/.max count Unicode code points (a surrogate pair is one), not UTF-16 units; a lone surrogate is one.
 * - z.object/looseObject accept any non-array object and rebuild a plain {}; looseObject copies unknown keys by
 *   for...in but skips `__proto__`, so an own `__proto__` key would be lost; records do the same.
 * - z.record needs util.isPlainObject: an own `constructor` that is a function can make it fail.
 *
 * Hot-path style: no allocation, plain loops; strict objects (the bodies, stream_options), messages and records are
 * walked once with for...in and a switch over keys (the top-level switch ordered by frequency), other loose objects
 * are read by name.
 */

const OBJECT_PROTO = Object.prototype;
const ARRAY_PROTO = Array.prototype;
const isArray = Array.isArray;
const isInteger = Number.isInteger;
const isSafeInteger = Number.isSafeInteger;

const TEXT_MAX = 50_000_000;

/**
 * A plain object as JSON.parse makes it: not null, not an array, prototype Object.prototype. Cheaper tests were
 * measured and left out: `v.constructor === Object` also passes Object.create({...}), and reading `v.__proto__` is
 * ~2 ns on one hidden class but slower than this ~9 ns call once many shapes go through the same check.
 */
function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === OBJECT_PROTO;
}

/** A plain Array (not a subclass, not another realm's). */
function isArr(v: unknown): v is unknown[] {
  return isArray(v) && Object.getPrototypeOf(v) === ARRAY_PROTO;
}

/** zod's util.codePointLength: UTF-16 units minus well-formed surrogate pairs. */
function codePoints(s: string): number {
  const units = s.length;
  let count = units;
  for (let i = 0; i < units - 1; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

/** z.string().max(max): at most `max` code points. Units <= max is the fast answer; twice max is a sure miss. */
function strMax(v: unknown, max: number): boolean {
  if (typeof v !== 'string') return false;
  const n = v.length;
  return n <= max || (n <= 2 * max && codePoints(v) <= max);
}

/** z.string().min(1).max(max): a non-empty string is at least one code point. */
function strMin1Max(v: unknown, max: number): boolean {
  return typeof v === 'string' && v.length >= 1 && strMax(v, max);
}

/** The schema's Text: z.string().max(50_000_000). Strings over 50M units are left to zod. */
function isText(v: unknown): boolean {
  return typeof v === 'string' && v.length <= TEXT_MAX;
}

/** z.number().int().min(lo).max(hi) with lo..hi inside the safe range. */
function intIn(v: unknown, lo: number, hi: number): boolean {
  return typeof v === 'number' && isInteger(v) && v >= lo && v <= hi;
}

/** z.number().min(lo).max(hi): NaN fails both comparisons and ±Infinity fails one. */
function numIn(v: unknown, lo: number, hi: number): boolean {
  return typeof v === 'number' && v >= lo && v <= hi;
}

/** z.record(z.string(), z.unknown()). */
function recordUnknown(v: unknown): boolean {
  if (!isObj(v)) return false;
  for (const k in v) {
    if (k === '__proto__') return false;
    if (k === 'constructor' && typeof v[k] === 'function') return false;
  }
  return true;
}

/** z.record(z.string(), z.string()). */
function recordString(v: unknown): boolean {
  if (!isObj(v)) return false;
  for (const k in v) {
    if (typeof v[k] !== 'string' || k === '__proto__') return false;
  }
  return true;
}

/** z.record(z.string(), z.number()). */
function recordNumber(v: unknown): boolean {
  if (!isObj(v)) return false;
  for (const k in v) {
    const x = v[k];
    if (typeof x !== 'number' || !Number.isFinite(x) || k === '__proto__') return false;
  }
  return true;
}

/** z.array(z.string()), optionally capped. */
function stringArray(v: unknown, max: number): boolean {
  if (!isArr(v)) return false;
  const n = v.length;
  if (n > max) return false;
  for (let i = 0; i < n; i++) if (typeof v[i] !== 'string') return false;
  return true;
}

// ---------------------------------------------------------------- chat
//
// Loose objects other than messages (parts, tool calls, tools...) are read by name, as zod reads them. Their unknown
// keys need no visit (zod passes them through untouched) except an own `__proto__`, which zod would drop, hence
// noProtoKey. An optional key present with the value undefined is accepted like an absent one: zod copies it as
// undefined, so the data still deep-equals the input.

const hasOwn = Object.prototype.hasOwnProperty;

/** No own `__proto__` key (zod's loose objects and records drop it, so their data would not deep-equal the input). */
function noProtoKey(o: object): boolean {
  return !hasOwn.call(o, '__proto__');
}

/** A content part: text and image_url are covered; the rarer kinds go to zod. */
function contentPart(p: unknown): boolean {
  if (!isObj(p)) return false;
  const type = p.type;
  if (type === 'text') return isText(p.text) && noProtoKey(p);
  if (type === 'image_url') return imageUrl(p.image_url) && noProtoKey(p);
  return false;
}

/** { url: string min 1, detail?: 'auto' | 'low' | 'high' }, loose. */
function imageUrl(v: unknown): boolean {
  if (!isObj(v)) return false;
  const url = v.url;
  if (typeof url !== 'string' || url.length === 0) return false;
  const detail = v.detail;
  if (detail !== undefined && detail !== 'auto' && detail !== 'low' && detail !== 'high') return false;
  return noProtoKey(v);
}

/** Content: Text | ContentPart[] (<= 10,000) | null. */
function content(v: unknown): boolean {
  if (typeof v === 'string') return v.length <= TEXT_MAX;
  if (v === null) return true;
  if (!isArr(v)) return false;
  const n = v.length;
  if (n > 10_000) return false;
  for (let i = 0; i < n; i++) if (!contentPart(v[i])) return false;
  return true;
}

/** ToolCall: { id string <= 256, type 'function', function: { name 1..256, arguments string } }, loose. */
function toolCall(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (v.type !== 'function' || !strMax(v.id, 256)) return false;
  const f = v.function;
  if (!isObj(f) || !strMin1Max(f.name, 256) || typeof f.arguments !== 'string') return false;
  return noProtoKey(v) && noProtoKey(f);
}

function toolCalls(v: unknown): boolean {
  if (!isArr(v)) return false;
  const n = v.length;
  if (n > 1000) return false;
  for (let i = 0; i < n; i++) if (!toolCall(v[i])) return false;
  return true;
}

/**
 * Message: role enum required; content / name / tool_calls / tool_call_id optional; other keys pass through.
 * Walked with for...in rather than named loads: messages of one body come in several shapes, and there named loads
 * of absent keys (name, tool_calls...) plus the own-`__proto__` test cost more than one pass over the keys.
 */
function message(m: unknown): boolean {
  if (!isObj(m)) return false;
  let role = false;
  for (const k in m) {
    const v = m[k];
    switch (k) {
      case 'role':
        if (v !== 'user' && v !== 'assistant' && v !== 'system' && v !== 'tool' && v !== 'developer' && v !== 'function') return false;
        role = true;
        break;
      case 'content':
        if (!content(v)) return false;
        break;
      case 'name':
      case 'tool_call_id':
        if (!strMax(v, 256)) return false;
        break;
      case 'tool_calls':
        if (v !== null && !toolCalls(v)) return false;
        break;
      case '__proto__':
        return false;
    }
  }
  return role;
}

function messages(v: unknown): boolean {
  if (!isArr(v)) return false;
  const n = v.length;
  if (n < 1 || n > 100_000) return false;
  for (let i = 0; i < n; i++) if (!message(v[i])) return false;
  return true;
}

/** stream_options: strict { include_usage?, include_obfuscation? } booleans. */
function streamOptions(v: unknown): boolean {
  if (!isObj(v)) return false;
  for (const k in v) {
    if ((k !== 'include_usage' && k !== 'include_obfuscation') || typeof v[k] !== 'boolean') return false;
  }
  return true;
}

/** Tool: { type: 'function', function: { name 1..256, description?, parameters? record, strict? boolean | null } }, loose. */
function tool(v: unknown): boolean {
  if (!isObj(v) || v.type !== 'function') return false;
  const f = v.function;
  if (!isObj(f) || !strMin1Max(f.name, 256)) return false;
  const description = f.description;
  if (description !== undefined && typeof description !== 'string') return false;
  const parameters = f.parameters;
  if (parameters !== undefined && !recordUnknown(parameters)) return false;
  const strict = f.strict;
  if (strict !== undefined && strict !== null && typeof strict !== 'boolean') return false;
  return noProtoKey(v) && noProtoKey(f);
}

function tools(v: unknown): boolean {
  if (!isArr(v)) return false;
  const n = v.length;
  if (n > 512) return false;
  for (let i = 0; i < n; i++) if (!tool(v[i])) return false;
  return true;
}

/** ToolChoice: 'none' | 'auto' | 'required' | { type: 'function', function: { name 1..256 } } (loose). */
function toolChoice(v: unknown): boolean {
  if (v === 'auto' || v === 'none' || v === 'required') return true;
  if (!isObj(v) || v.type !== 'function') return false;
  const f = v.function;
  return isObj(f) && strMin1Max(f.name, 256) && noProtoKey(v) && noProtoKey(f);
}

/** ResponseFormat: { type: 'text' } | { type: 'json_object' } | { type: 'json_schema', json_schema }, loose. */
function responseFormat(v: unknown): boolean {
  if (!isObj(v)) return false;
  const type = v.type;
  if (type === 'text' || type === 'json_object') return noProtoKey(v);
  if (type !== 'json_schema') return false;
  const js = v.json_schema;
  if (!isObj(js) || !strMin1Max(js.name, 256)) return false;
  const description = js.description;
  if (description !== undefined && typeof description !== 'string') return false;
  const schema = js.schema;
  if (schema !== undefined && !recordUnknown(schema)) return false;
  const strict = js.strict;
  if (strict !== undefined && strict !== null && typeof strict !== 'boolean') return false;
  return noProtoKey(v) && noProtoKey(js);
}

/** looseObject({}): any plain object; its values pass through as they are. */
function looseEmpty(v: unknown): boolean {
  return isObj(v) && noProtoKey(v);
}

function looseObjectArray(v: unknown): boolean {
  if (!isArr(v)) return false;
  const n = v.length;
  for (let i = 0; i < n; i++) if (!looseEmpty(v[i])) return false;
  return true;
}

/** true => ChatCompletionRequest.safeParse(body) succeeds and its data deep-equals body. false => ask zod. */
export function fastValidChat(body: unknown): boolean {
  if (!isObj(body)) return false;
  let model = false;
  let msgs = false;
  for (const k in body) {
    const v = body[k];
    switch (k) {
      case 'model':
        if (!strMin1Max(v, 256)) return false;
        model = true;
        break;
      case 'messages':
        if (!messages(v)) return false;
        msgs = true;
        break;
      case 'max_tokens':
      case 'max_completion_tokens':
        if (v !== null && !intIn(v, 1, 10_000_000)) return false;
        break;
      case 'temperature':
        if (v !== null && !numIn(v, 0, 2)) return false;
        break;
      case 'stream':
      case 'logprobs':
      case 'store':
        if (v !== null && typeof v !== 'boolean') return false;
        break;
      case 'stream_options':
        if (v !== null && !streamOptions(v)) return false;
        break;
      case 'top_p':
        if (v !== null && !numIn(v, 0, 1)) return false;
        break;
      case 'tools':
        if (!tools(v)) return false;
        break;
      case 'tool_choice':
        if (!toolChoice(v)) return false;
        break;
      case 'parallel_tool_calls':
        if (typeof v !== 'boolean') return false;
        break;
      case 'response_format':
        if (!responseFormat(v)) return false;
        break;
      case 'user':
      case 'prompt_cache_key':
      case 'safety_identifier':
        if (!strMax(v, 256)) return false;
        break;
      case 'stop':
        if (v !== null && typeof v !== 'string' && !stringArray(v, 4)) return false;
        break;
      case 'presence_penalty':
      case 'frequency_penalty':
        if (v !== null && !numIn(v, -2, 2)) return false;
        break;
      case 'seed':
        if (v !== null && !isSafeInteger(v)) return false;
        break;
      case 'n':
        if (v !== null && !intIn(v, 1, 128)) return false;
        break;
      case 'metadata':
        if (v !== null && !recordString(v)) return false;
        break;
      case 'reasoning_effort':
      case 'service_tier':
      case 'verbosity':
        if (v !== null && !strMax(v, 32)) return false;
        break;
      case 'logit_bias':
        if (v !== null && !recordNumber(v)) return false;
        break;
      case 'top_logprobs':
        if (v !== null && !intIn(v, 0, 20)) return false;
        break;
      case 'modalities':
        if (v !== null && !stringArray(v, Infinity)) return false;
        break;
      case 'prediction':
      case 'audio':
        if (v !== null && !looseEmpty(v)) return false;
        break;
      case 'web_search_options':
        if (!looseEmpty(v)) return false;
        break;
      case 'functions':
        if (!looseObjectArray(v)) return false;
        break;
      case 'function_call':
        if (typeof v !== 'string' && !looseEmpty(v)) return false;
        break;
      default:
        // unknown top-level keys (and __proto__) are errors for the strict object
        return false;
    }
  }
  return model && msgs;
}

// ---------------------------------------------------------------- embeddings

/** input: string | string[1..4096] | safe-int[1..] | safe-int[][1..4096] (inner arrays may be empty). */
function embeddingsInput(v: unknown): boolean {
  if (typeof v === 'string') return true;
  if (!isArr(v)) return false;
  const n = v.length;
  if (n < 1) return false;
  const first = v[0];
  if (typeof first === 'string') return stringArray(v, 4096);
  if (typeof first === 'number') {
    for (let i = 0; i < n; i++) if (!isSafeInteger(v[i])) return false;
    return true;
  }
  if (n > 4096) return false;
  for (let i = 0; i < n; i++) {
    const row = v[i];
    if (!isArr(row)) return false;
    const m = row.length;
    for (let j = 0; j < m; j++) if (!isSafeInteger(row[j])) return false;
  }
  return true;
}

/** true => EmbeddingsRequest.safeParse(body) succeeds and its data deep-equals body. false => ask zod. */
export function fastValidEmbeddings(body: unknown): boolean {
  if (!isObj(body)) return false;
  let model = false;
  let input = false;
  for (const k in body) {
    const v = body[k];
    switch (k) {
      case 'model':
        if (!strMin1Max(v, 256)) return false;
        model = true;
        break;
      case 'input':
        if (!embeddingsInput(v)) return false;
        input = true;
        break;
      case 'encoding_format':
        if (v !== 'float' && v !== 'base64') return false;
        break;
      case 'dimensions':
        if (!intIn(v, 1, 8192)) return false;
        break;
      case 'user':
        if (!strMax(v, 256)) return false;
        break;
      default:
        return false;
    }
  }
  return model && input;
}
