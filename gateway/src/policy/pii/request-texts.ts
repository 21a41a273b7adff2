import { PII_PARTS, type PiiPart } from '../../contract/policies.js';

/**
 * Visits every piece of text an OpenAI chat completions or embeddings request carries. The visitor may return a
 * replacement, which is written back in place; the walker never throws on unexpected shapes, it skips them.
 */
export type TextVisitor = (text: string, field: string) => string | undefined;

/** The parts of a request a walk visits (rules.pii_scope). */
export type PiiScope = ReadonlySet<PiiPart>;
export const EVERY_PART: PiiScope = new Set(PII_PARTS);

type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Visits the string at `holder[key]` (reported as `field`), writing back a replacement. */
export function visitField(holder: Json, key: string, visit: TextVisitor, field = key): void {
  const value = holder[key];
  if (typeof value !== 'string') return;
  const replaced = visit(value, field);
  if (replaced !== undefined && replaced !== value) holder[key] = replaced;
}

/** `content` as a string or as an array of parts; text lives in `text` (and `refusal`) of any part. */
export function visitContent(holder: Json, key: string, visit: TextVisitor): void {
  const content = holder[key];
  if (typeof content === 'string') {
    visitField(holder, key, visit);
  } else if (Array.isArray(content)) {
    for (const part of content) {
      if (!isObject(part)) continue;
      visitField(part, 'text', visit);
      visitField(part, 'refusal', visit);
    }
  }
}

function visitMessage(message: Json, visit: TextVisitor): void {
  visitContent(message, 'content', visit);
  visitField(message, 'refusal', visit);
  // Participant names are forwarded too, and people put their e-mail address there.
  visitField(message, 'name', visit);
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (isObject(call) && isObject(call.function)) visitField(call.function, 'arguments', visit);
    }
  }
  // The deprecated single function call of older clients.
  if (isObject(message.function_call)) visitField(message.function_call, 'arguments', visit);
}

/** The part of a request a chat message belongs to: tool results count as user input. */
function partOf(role: unknown): PiiPart {
  return role === 'assistant' ? 'assistant' : role === 'system' || role === 'developer' ? 'system' : 'user';
}

/** Every string inside a JSON value (tool schemas), at any depth. */
export function visitStrings(holder: Json | unknown[], visit: TextVisitor, field: string, depth = 0): void {
  if (depth > 64) return;
  const keys = Array.isArray(holder) ? holder.keys() : Object.keys(holder);
  for (const k of keys) {
    const h = holder as Record<string | number, unknown>;
    const v = h[k];
    if (typeof v === 'string') {
      const r = visit(v, field);
      if (r !== undefined && r !== v) h[k] = r;
    } else if (typeof v === 'object' && v !== null) visitStrings(v as Json, visit, field, depth + 1);
  }
}

export function visitRequestTexts(body: unknown, visit: TextVisitor, scope: PiiScope = EVERY_PART): void {
  if (!isObject(body)) return;
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) if (isObject(message) && scope.has(partOf(message.role))) visitMessage(message, visit);
  }
  if (scope.has('tools') && Array.isArray(body.tools)) {
    for (const tool of body.tools) if (isObject(tool) && isObject(tool.function)) visitStrings(tool.function, visit, 'tools');
  }
  if (!scope.has('user')) return;
  // End-user ids and metadata values travel upstream with the request.
  visitField(body, 'user', visit);
  visitField(body, 'safety_identifier', visit);
  if (isObject(body.metadata)) for (const key of Object.keys(body.metadata)) visitField(body.metadata, key, visit);
  // Predicted outputs are text the client sends along.
  if (isObject(body.prediction)) visitContent(body.prediction, 'content', visit);
  // Embeddings: a string or an array of strings; arrays of token ids are numbers and carry no text.
  if (typeof body.input === 'string') {
    visitField(body, 'input', visit);
  } else if (Array.isArray(body.input)) {
    const input = body.input;
    for (let i = 0; i < input.length; i++) {
      const item = input[i];
      if (typeof item !== 'string') continue;
      const replaced = visit(item, 'input');
      if (replaced !== undefined && replaced !== item) input[i] = replaced;
    }
  }
}
