import { DIALECT_MEMBERS, clientShaped } from '../contract/dialect-members.js';
import { countTokens } from '../tokenizer/o200k.js';

/*
 * Two kinds of token counts:
 *
 * - Estimates (`countTokens`, `countChatPromptTokens`): the o200k_base tokenizer, for usage records when an upstream reports no usage.
 *
 * - An upper bound (`promptTokensUpperBound`) for budget reservations and cost caps, which must never be below what any upstream bills.
 *   It counts UTF-8 bytes, not tokens, for this reason: every byte-level BPE tokenizer (tiktoken's o200k/cl100k, Llama 3, GPT-2 family)
 *   starts from one token per byte of the UTF-8 text and only ever merges adjacent tokens, so a text never has more tokens than bytes.
 *   SentencePiece tokenizers with byte fallback (Gemini, Mistral, Llama 2) emit either a piece of at least one character or one byte
 *   token, so the same holds, plus at most one dummy-prefix token per text segment (counted per string below).
 *   What the chat template adds (role markers, reply priming, tool-use system prompts) is not in the request bytes and is added as
 *   fixed overheads; images are billed per image, not per byte, and count a fixed worst case.
 *   Buffer.byteLength runs no tokenizer, so the bound is cheap enough for every request.
 */

export { countTokens } from '../tokenizer/o200k.js';

/** Reply priming, begin-of-sequence and template preambles (Llama 3.1+ prepends a dated system header of ~25 tokens). */
export const REQUEST_OVERHEAD_TOKENS = 64;
/** Role markers and separators around each message (OpenAI 3-4, Llama 3 5, Gemma 5). */
export const PER_MESSAGE_OVERHEAD_TOKENS = 8;
/** A SentencePiece tokenizer may add one dummy-prefix token to each separately encoded text. */
export const PER_STRING_OVERHEAD_TOKENS = 1;
/** The system prompt providers add when tools are present (Anthropic documents up to ~530 tokens). */
export const TOOLS_OVERHEAD_TOKENS = 1_024;
/** The wrapper each tool definition is rendered in (namespace, type and signature text). */
export const PER_TOOL_OVERHEAD_TOKENS = 32;
/** Begin/end tokens around each embeddings input. */
export const PER_INPUT_OVERHEAD_TOKENS = 4;

/**
 * Most tokens one image can be billed for, on every model in the price table but gpt-4o-mini:
 * OpenAI tile models 85 + 8 x 170 = 1,445; patch models 1,536 patches x 2.46 = 3,779; Claude ~1,600 (images resized to 1.15 MP);
 * Gemini 258 per 768 px tile of an image scaled to at most 3072 px = 4,128.
 */
export const IMAGE_TOKENS_UPPER_BOUND = 6_144;
/**
 * A document or file sent by URL or id may be as long as the model's context: it counts this many tokens, which the
 * worst case then caps at each target's context window (accounting/cost.ts), so it is priced at that window.
 */
export const FILE_BY_REFERENCE_TOKENS = 10_000_000;
/** gpt-4o-mini bills images at 2,833 + 5,667 per tile (to match gpt-4o's price): 2,833 + 8 x 5,667. */
export const GPT_4O_MINI_IMAGE_TOKENS_UPPER_BOUND = 48_169;

/** The per-image worst case for `model` (an upstream id or `provider/model`). */
export function imageTokensUpperBound(model?: string): number {
  return model !== undefined && model.includes('gpt-4o-mini') ? GPT_4O_MINI_IMAGE_TOKENS_UPPER_BOUND : IMAGE_TOKENS_UPPER_BOUND;
}

/** The fields of a chat completions or embeddings request that carry prompt tokens. */
export interface PromptRequest {
  model?: string;
  messages?: readonly unknown[];
  tools?: readonly unknown[] | null;
  /** Legacy function calling. */
  functions?: readonly unknown[] | null;
  response_format?: unknown;
  /** Embeddings input: a string, strings, token ids or arrays of token ids. */
  input?: unknown;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
}

/** The completion tokens the request asks for at most (`max_completion_tokens` over the deprecated `max_tokens`), or null. */
export function requestedMaxOutputTokens(body: PromptRequest): number | null {
  return body.max_completion_tokens ?? body.max_tokens ?? null;
}

const IMAGE_PART_TYPES = new Set(['image_url', 'image', 'input_image']);

function isImagePart(o: Record<string, unknown>): boolean {
  return (typeof o.type === 'string' && IMAGE_PART_TYPES.has(o.type)) || (o.type === undefined && 'image_url' in o);
}

/** What a part of a prompt counts towards the bound: bytes of its strings, the strings, the images, files of unknown size. */
export interface Tally {
  bytes: number;
  strings: number;
  images: number;
  /** Documents and files sent by URL or id: their size is unknown here. */
  files: number;
}

/** The tally of one message (any JSON value): what the bound counts of it besides the per-message overhead. */
export function tallyOf(message: unknown): Tally {
  const t: Tally = { bytes: 0, strings: 0, images: 0, files: 0 };
  tallyBytes(message, t);
  return t;
}

/** A document or file the upstream fetches or looks up itself (by URL or id), not sent inline. */
function isFileByReference(o: Record<string, unknown>): boolean {
  if (o.type === 'document' || o.type === 'container_upload') {
    const source = o.source;
    if (source !== null && typeof source === 'object' && !Array.isArray(source)) {
      const type = (source as Record<string, unknown>).type;
      return type === 'url' || type === 'file';
    }
    return typeof o.file_id === 'string';
  }
  return (typeof o.file_id === 'string' || typeof o.file_url === 'string') && o.file_data === undefined;
}

/**
 * Adds the bytes of every string, number and client-named key inside `value`, at any depth (no recursion); image parts
 * count as images whatever their URL or data, documents and files by reference as files.
 */
function tallyBytes(root: unknown, t: Tally, rootShaped = false): void {
  const stack: unknown[] = [root];
  // Per queued value: whether it lies below a member the client shapes (tool inputs, schemas, metadata), where an object
  // that looks like an image or a file is text the model reads like any other, and counts by its bytes.
  const shaped: boolean[] = [rootShaped];
  while (stack.length > 0) {
    const value = stack.pop();
    const free = shaped.pop()!;
    if (typeof value === 'string') {
      t.bytes += Buffer.byteLength(value, 'utf8');
      t.strings += 1;
    } else if (typeof value === 'number' || typeof value === 'boolean') {
      t.bytes += String(value).length;
      t.strings += 1;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push(value[i]);
        shaped.push(free);
      }
    } else if (value !== null && typeof value === 'object') {
      const o = value as Record<string, unknown>;
      if (!free && isImagePart(o)) {
        t.images += 1;
      } else if (!free && isFileByReference(o)) {
        t.files += 1;
      } else {
        for (const key of Object.keys(o)) {
          // The model reads the keys of objects the client names (tool inputs); the dialect's own are markup.
          if (!DIALECT_MEMBERS.has(key)) t.bytes += Buffer.byteLength(key, 'utf8');
          stack.push(o[key]);
          shaped.push(free || clientShaped(o, key));
        }
      }
    }
  }
}

/** The members of a body a bound tallies as `rest`: each name and its value, and whether the client shapes the value. */
export type RestMembers = Array<{ key: string; value: unknown; shaped: boolean }>;

/** The members of `body` not named in `counted`: what a bound tallies as `rest`. */
export function membersBesides(body: Record<string, unknown>, counted: ReadonlySet<string>): RestMembers {
  const out: RestMembers = [];
  for (const key of Object.keys(body)) if (!counted.has(key)) out.push({ key, value: body[key], shaped: clientShaped(body, key) });
  return out;
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

/** The bytes the bound counts for a tool list (its JSON text). */
export const toolsBytes = (tools: readonly unknown[]) => jsonBytes(tools);

/** Parts of the bound computed elsewhere (looked up for a conversation already seen): the same numbers, fresh or not. */
export interface BoundParts {
  /** One tally per message of `messages`, in order (see tallyOf). */
  tallies?: readonly Tally[];
  /** toolsBytes(tools) when the request has tools and no legacy functions. */
  toolsBytes?: number;
  /** The members of the request besides the conversation and tools (tallied whole: everything the upstream reads counts). */
  rest?: RestMembers;
}

/**
 * A number of prompt tokens no upstream tokenizer can exceed for this request (see the note at the top of this file).
 * `imageTokens` overrides the per-image worst case (default: imageTokensUpperBound(body.model)).
 * File parts sent inline (PDFs) count their data bytes, a best effort: a compressed document's bytes do not bound its text;
 * files by URL or id count FILE_BY_REFERENCE_TOKENS.
 */
export function promptTokensUpperBound(body: PromptRequest, options: { imageTokens?: number } & BoundParts = {}): number {
  const t: Tally = { bytes: 0, strings: 0, images: 0, files: 0 };
  let overhead = REQUEST_OVERHEAD_TOKENS;
  const messages = body.messages ?? [];
  const tallies = options.tallies;
  for (let i = 0; i < messages.length; i++) {
    overhead += PER_MESSAGE_OVERHEAD_TOKENS;
    const known = tallies?.[i];
    if (known === undefined) {
      tallyBytes(messages[i], t);
    } else {
      t.bytes += known.bytes;
      t.strings += known.strings;
      t.images += known.images;
      t.files += known.files;
    }
  }
  for (const m of options.rest ?? []) {
    // The name as a string, the value as what it is (below a member no dialect defines, nothing counts as an image).
    t.bytes += Buffer.byteLength(m.key, 'utf8');
    t.strings += 1;
    tallyBytes(m.value, t, m.shaped);
  }
  const functions = body.functions ?? [];
  const tools = functions.length === 0 ? (body.tools ?? []) : [...(body.tools ?? []), ...functions];
  if (tools.length > 0) {
    overhead += TOOLS_OVERHEAD_TOKENS + PER_TOOL_OVERHEAD_TOKENS * tools.length;
    t.bytes += functions.length === 0 && options.toolsBytes !== undefined ? options.toolsBytes : jsonBytes(tools);
  }
  if (body.response_format !== undefined && body.response_format !== null) t.bytes += jsonBytes(body.response_format);
  overhead += embeddingsInputBound(body.input);
  const perImage = options.imageTokens ?? imageTokensUpperBound(body.model);
  return t.bytes + t.strings * PER_STRING_OVERHEAD_TOKENS + t.images * perImage + t.files * FILE_BY_REFERENCE_TOKENS + overhead;
}

/** Embeddings inputs: text counts its bytes, token-id arrays count their length. */
function embeddingsInputBound(input: unknown): number {
  if (input === undefined || input === null) return 0;
  const inputs = typeof input === 'string' || (Array.isArray(input) && typeof input[0] === 'number') ? [input] : Array.isArray(input) ? input : [input];
  let total = 0;
  for (const item of inputs) {
    total += PER_INPUT_OVERHEAD_TOKENS;
    if (typeof item === 'string') total += Buffer.byteLength(item, 'utf8') + PER_STRING_OVERHEAD_TOKENS;
    else if (Array.isArray(item)) total += item.length;
    else total += jsonBytes(item);
  }
  return total;
}

/** OpenAI's accounting: 3 tokens per message, 1 more for a name, 3 to prime the reply. */
const OPENAI_TOKENS_PER_MESSAGE = 3;
const OPENAI_TOKENS_PER_NAME = 1;
const OPENAI_REPLY_PRIMING = 3;
/** What OpenAI bills an image at high or auto detail for a typical 1024 x 1024 image (4 tiles), and at low detail. */
const IMAGE_TOKENS_ESTIMATE = 765;
const IMAGE_TOKENS_ESTIMATE_LOW = 85;

function estimateValue(value: unknown, depth = 0): number {
  if (typeof value === 'string') return countTokens(value);
  if (typeof value === 'number' || typeof value === 'boolean') return countTokens(String(value));
  if (value === null || typeof value !== 'object' || depth >= 64) return 0;
  if (Array.isArray(value)) return value.reduce<number>((n, v) => n + estimateValue(v, depth + 1), 0);
  const o = value as Record<string, unknown>;
  if (isImagePart(o)) {
    const detail = (o.image_url as { detail?: unknown } | undefined)?.detail;
    return detail === 'low' ? IMAGE_TOKENS_ESTIMATE_LOW : IMAGE_TOKENS_ESTIMATE;
  }
  let n = 0;
  for (const [k, v] of Object.entries(o)) {
    if (k === 'type' && depth > 0) continue;
    n += estimateValue(v, depth + 1);
  }
  return n;
}

/**
 * An estimate of the prompt tokens of an OpenAI chat request: message texts in o200k_base with OpenAI's per-message overhead,
 * tool definitions as their JSON, images at a typical size. For usage records when the upstream reports none; not a bound.
 */
export function countChatPromptTokens(body: PromptRequest): number {
  let n = 0;
  for (const message of body.messages ?? []) {
    n += OPENAI_TOKENS_PER_MESSAGE + estimateValue(message);
    if (message !== null && typeof message === 'object' && typeof (message as { name?: unknown }).name === 'string') {
      n += OPENAI_TOKENS_PER_NAME;
    }
  }
  if (body.messages && body.messages.length > 0) n += OPENAI_REPLY_PRIMING;
  const tools = [...(body.tools ?? []), ...(body.functions ?? [])];
  if (tools.length > 0) n += countTokens(JSON.stringify(tools));
  if (body.input !== undefined && body.input !== null) n += countEmbeddingsInputTokens(body.input);
  return n;
}

/** Tokens of an embeddings input (strings in o200k_base; token-id arrays by length). */
export function countEmbeddingsInputTokens(input: unknown): number {
  if (typeof input === 'string') return countTokens(input);
  if (!Array.isArray(input)) return 0;
  if (typeof input[0] === 'number') return input.length;
  return input.reduce<number>((n, item) => n + (typeof item === 'string' ? countTokens(item) : Array.isArray(item) ? item.length : 0), 0);
}
