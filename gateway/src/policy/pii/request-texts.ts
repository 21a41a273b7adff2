import { PII_PARTS, type PiiPart } from '../../contract/policies.js';
import { visitAll, visitMember } from './walk-all.js';

/**
 * Visits a piece of text of a request (`field` names the member it came from). The visitor may return a replacement,
 * which is written back in place; the walkers never throw on unexpected shapes, they read them whole.
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

/** The part of a request a chat message belongs to: tool results count as user input. */
export function roleScope(role: unknown): PiiPart {
  return role === 'assistant' ? 'assistant' : role === 'system' || role === 'developer' ? 'system' : 'user';
}

/**
 * Visits each element of the conversation `body[key]` whole (visitAll) when the part it belongs to (`partOf`) is in scope;
 * anything but an array is read whole as user input.
 */
export function visitConversation(body: Json, key: string, visit: TextVisitor, scope: PiiScope, partOf: (element: Json) => PiiPart | null): void {
  const list = body[key];
  if (!Array.isArray(list)) {
    if (scope.has('user')) visitAll(body, key, visit, key);
    return;
  }
  for (let i = 0; i < list.length; i++) {
    const element = list[i];
    const part = isObject(element) ? partOf(element) : 'user';
    if (part !== null && scope.has(part)) visitAll(list, i, visit, key);
  }
}

/**
 * An OpenAI Chat Completions or Embeddings request. Every member is read (the fail-closed rule: what the upstream reads,
 * the checks read): messages whole, under their role's part; tool definitions and the response schema under `tools`;
 * every other member but `model` as user input (end-user ids, metadata, predicted outputs, embeddings input).
 */
export function visitRequestTexts(body: unknown, visit: TextVisitor, scope: PiiScope = EVERY_PART): void {
  if (!isObject(body)) return;
  for (const key of Object.keys(body)) {
    switch (key) {
      case 'model':
        break;
      case 'messages':
        visitConversation(body, key, visit, scope, (m) => roleScope(m.role));
        break;
      case 'tools':
      case 'functions':
      case 'response_format':
        if (scope.has('tools')) visitAll(body, key, visit, key);
        break;
      case 'input':
        if (scope.has('user')) visitEmbeddingsInput(body, visit);
        break;
      default:
        if (scope.has('user')) visitMember(body, key, visit, key);
    }
  }
}

/** Embeddings input: a string, strings, or token ids (numbers the model reads as tokens, not as digits). */
function visitEmbeddingsInput(body: Json, visit: TextVisitor): void {
  const input = body.input;
  if (!Array.isArray(input)) return visitAll(body, 'input', visit, 'input');
  for (let i = 0; i < input.length; i++) {
    const item = input[i];
    if (typeof item === 'number' || (Array.isArray(item) && item.every((t) => typeof t === 'number'))) continue;
    visitAll(input, i, visit, 'input');
  }
}
