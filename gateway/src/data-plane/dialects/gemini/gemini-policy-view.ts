// How the checks read a Gemini generateContent request: every member, under either of its spellings.
import { FILE_BY_REFERENCE_TOKENS, IMAGE_TOKENS_UPPER_BOUND, type PromptRequest, membersBesides, promptTokensUpperBound } from '../../../accounting/tokens.js';
import type { PiiPart } from '../../../contract/index.js';
import { EVERY_PART, type PiiScope, type TextVisitor, isObject } from '../../../policy/pii/request-texts.js';
import { decodedBase64, isMediaType, isOpaque, visitAll, visitMember } from '../../../policy/pii/walk-all.js';
import type { PolicyView } from '../../../policy/policy-view.js';
import { boundParts, retryMember, retryPart } from '../../../policy/part-facts.js';
import { memberOf, snakeOf } from './gemini-shape.js';

type Json = Record<string, unknown>;

/** The camelCase member a request-level key spells, or the key itself. */
function camelKey(key: string): string {
  return key.includes('_') ? key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) : key;
}

/** Schemas of the answer, read as tool definitions are (pii_scope `tools`). */
const SCHEMA_MEMBERS: ReadonlySet<string> = new Set(['responseSchema', 'responseJsonSchema', '_responseJsonSchema']);

/**
 * A content's part, member by member. Two members carry no text a client wrote, and are the only ones skipped (the
 * policy tests list them): `thoughtSignature` (signed by the model; the upstream refuses an edited one) and the
 * `data` of inline media (base64 images, audio, video, PDFs). Inline data of any other type (text/plain, JSON, code)
 * is text the model reads: it is decoded, read, and written back encoded when a rule rewrites it.
 */
function visitPart(parts: unknown[], i: number, visit: TextVisitor, field: string): void {
  const part = parts[i];
  if (!isObject(part)) {
    visitAll(parts, i, visit, field);
    return;
  }
  for (const key of Object.keys(part)) {
    const member = camelKey(key);
    if (member === 'thoughtSignature' && typeof part[key] === 'string' && isOpaque(part[key])) continue;
    if (member === 'inlineData' && isObject(part[key])) visitInlineData(part[key] as Json, visit, field);
    else visitMember(part, key, visit, field);
  }
}

function visitInlineData(blob: Json, visit: TextVisitor, field: string): void {
  const mime = memberOf(blob, 'mimeType');
  for (const key of Object.keys(blob)) {
    const data = blob[key];
    if (key !== 'data' || typeof data !== 'string') {
      visitMember(blob, key, visit, field);
      continue;
    }
    if (typeof mime === 'string' && isMediaType(mime)) {
      // Media in base64 is skipped; anything else there is text the upstream receives, read as sent.
      if (!isOpaque(data)) visitMember(blob, key, visit, field);
      continue;
    }
    const decoded = decodedBase64(data);
    const r = visit(decoded.text, field);
    if (r !== undefined && r !== decoded.text) blob[key] = decoded.encode(r);
  }
}

/** A content (a turn, or the system instruction): its parts one by one, every other member whole. */
function visitContent(holder: Json | unknown[], key: string | number, visit: TextVisitor, field: string): void {
  const content = (holder as Record<string | number, unknown>)[key];
  if (!isObject(content)) {
    visitAll(holder, key, visit, field);
    return;
  }
  for (const k of Object.keys(content)) {
    const parts = content[k];
    if (k === 'parts' && Array.isArray(parts)) {
      for (let i = 0; i < parts.length; i++) visitPart(parts, i, visit, field);
    } else visitMember(content, k, visit, field);
  }
}

/** A turn's part of the request: the model's turns are the assistant's; function responses come in user turns. */
const partOf = (c: unknown): PiiPart => (isObject(c) && memberOf(c, 'role') === 'model' ? 'assistant' : 'user');

/**
 * Every member is read (the fail-closed rule, policy/pii/walk-all.ts), under either spelling: the system instruction
 * under `system`, each turn under its role's part, tools, tool config and the answer's schema under `tools`, every
 * other member (safety settings, cached content names, labels, members unknown today) as user input.
 */
export function visitGeminiTexts(body: Json, visit: TextVisitor, scope: PiiScope = EVERY_PART): void {
  for (const key of Object.keys(body)) {
    switch (camelKey(key)) {
      case 'model':
        break;
      case 'generateContentRequest':
        // countTokens' wrapped request: read as a request.
        if (isObject(body[key])) visitGeminiTexts(body[key] as Json, visit, scope);
        else if (scope.has('user')) visitAll(body, key, visit, key);
        break;
      case 'contents': {
        const list = body[key];
        if (!Array.isArray(list)) {
          if (scope.has('user')) visitAll(body, key, visit, key);
          break;
        }
        for (let i = 0; i < list.length; i++) if (scope.has(partOf(list[i]))) visitContent(list, i, visit, key);
        break;
      }
      case 'systemInstruction':
        if (scope.has('system')) visitContent(body, key, visit, key);
        break;
      case 'tools':
      case 'toolConfig':
        if (scope.has('tools')) visitAll(body, key, visit, key);
        break;
      case 'generationConfig': {
        const config = body[key];
        if (!isObject(config)) {
          if (scope.has('user')) visitAll(body, key, visit, key);
          break;
        }
        for (const k of Object.keys(config)) {
          const part = SCHEMA_MEMBERS.has(camelKey(k)) || SCHEMA_MEMBERS.has(k) ? 'tools' : 'user';
          if (scope.has(part)) visitMember(config, k, visit, key);
        }
        break;
      }
      default:
        if (scope.has('user')) visitMember(body, key, visit, key);
    }
  }
}

/** The spelling of a request member this body uses (the camelCase one when absent). */
function spelled(body: Json, camel: string): string {
  return body[camel] === undefined && body[snakeOf(camel)] !== undefined ? snakeOf(camel) : camel;
}

/** Media the bound counts by kind, not by bytes: inline images (a fixed cost per image) and files by reference. */
function mediaTokens(contents: unknown): number {
  if (!Array.isArray(contents)) return 0;
  let n = 0;
  for (const c of contents) {
    const parts = isObject(c) ? c.parts : undefined;
    if (!Array.isArray(parts)) continue;
    for (const p of parts) {
      if (!isObject(p)) continue;
      if (p.fileData !== undefined || p.file_data !== undefined) n += FILE_BY_REFERENCE_TOKENS;
      const blob = p.inlineData ?? p.inline_data;
      if (isObject(blob)) {
        const mime = memberOf(blob, 'mimeType');
        if (typeof mime === 'string' && /^image\//i.test(mime)) n += IMAGE_TOKENS_UPPER_BOUND;
      }
    }
  }
  return n;
}

const COUNTED: ReadonlySet<string> = new Set(['model', 'contents', 'systemInstruction', 'system_instruction', 'tools']);

function generationConfigOf(body: Json): Json | undefined {
  const c = memberOf(body, 'generationConfig');
  return isObject(c) ? c : undefined;
}

export const geminiPolicyView: PolicyView = {
  endpoint: 'gemini',
  producesOutput: true,
  visitTexts: visitGeminiTexts,
  promptTokensUpperBound(body) {
    const contentsKey = spelled(body, 'contents');
    const systemKey = spelled(body, 'systemInstruction');
    const contents = Array.isArray(body[contentsKey]) ? (body[contentsKey] as unknown[]) : [];
    const system = body[systemKey];
    const all = system === undefined ? contents : [{ content: system }, ...contents];
    const parts = boundParts(body, contentsKey, system === undefined ? undefined : systemKey);
    const tools = Array.isArray(body.tools) ? (body.tools as PromptRequest['tools']) : undefined;
    return (
      promptTokensUpperBound({ model: body.model as string, messages: all, tools }, { tallies: parts.tallies, toolsBytes: parts.toolsBytes, rest: membersBesides(body, COUNTED) }) +
      mediaTokens(contents) +
      // A cached content is a prompt stored upstream, of a size unknown here: counted as a file by reference.
      (typeof memberOf(body, 'cachedContent') === 'string' ? FILE_BY_REFERENCE_TOKENS : 0)
    );
  },
  // Thoughts are inside maxOutputTokens (a thinking model that thinks long answers MAX_TOKENS).
  requestedMaxOutputTokens(body) {
    const max = generationConfigOf(body) ? memberOf(generationConfigOf(body)!, 'maxOutputTokens') : undefined;
    return typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : null;
  },
  answers(body) {
    const n = generationConfigOf(body) ? memberOf(generationConfigOf(body)!, 'candidateCount') : undefined;
    return typeof n === 'number' && Number.isInteger(n) && n > 1 ? n : 1;
  },
  retrySubject: (body) => [body.model, retryMember(body, spelled(body, 'systemInstruction')), retryPart(body, spelled(body, 'contents'))],
  withMaxOutputTokens(body, maxTokens) {
    const key = spelled(body, 'generationConfig');
    const config = isObject(body[key]) ? (body[key] as Json) : {};
    const maxKey = config.max_output_tokens !== undefined ? 'max_output_tokens' : 'maxOutputTokens';
    const thinking = memberOf(config, 'thinkingConfig');
    const budget = isObject(thinking) ? memberOf(thinking, 'thinkingBudget') : undefined;
    const next: Json = { ...config, [maxKey]: maxTokens };
    if (typeof budget === 'number' && budget >= maxTokens && isObject(thinking)) {
      // The thinking budget is spent inside the output limit: it must leave room for the answer.
      const budgetKey = thinking.thinking_budget !== undefined ? 'thinking_budget' : 'thinkingBudget';
      next[spelled(config, 'thinkingConfig')] = { ...thinking, [budgetKey]: Math.max(0, Math.floor(maxTokens / 2)) };
    }
    return { ...body, [key]: next };
  },
};
