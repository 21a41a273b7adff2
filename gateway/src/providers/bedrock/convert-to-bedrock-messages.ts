// OpenAI messages -> Converse system blocks and alternating user/assistant messages with toolUse/toolResult blocks.
import type { OpenAIChatMessage, OpenAIContentPart, OpenAITextPart } from '../openai-format.js';
import { AgentgwError } from '../../contract/errors.js';
import { type Breakpoint, breakpointWithoutContent, cacheControlOf, hasMarkedPart } from '../anthropic/cache-control.js';
import { checkContentPresent, contentText, parseDataUrl, parseToolArguments, unsupportedPart } from '../shared/message-content.js';
import type { BedrockCachePoint, BedrockContentBlock, BedrockMessage } from './bedrock-api.js';

const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

type SystemBlock = { text: string } | BedrockCachePoint;

/**
 * A Converse prompt-cache checkpoint, placed right after the block it ends, with the client's ttl when it gave one
 * ("5m" or "1h"; without one Bedrock keeps the entry 5 minutes). Converse reports the 1-hour writes apart
 * (usage.cacheDetails), and convert-bedrock-usage.ts bills them at their rate.
 */
export function cachePoint(ttl?: '5m' | '1h'): BedrockCachePoint {
  return { cachePoint: ttl === undefined ? { type: 'default' } : { type: 'default', ttl } };
}

/** Blocks a client marked, with where the marker came from (the first one read when two fall on one block). */
type Marks = Map<object, Breakpoint>;

function mark(marked: Marks, block: object, param: string, ttl: '5m' | '1h' | undefined): void {
  if (!marked.has(block)) marked.set(block, { param, ttl });
}

/** `blocks` with a cachePoint after each block in `marked`. */
function withCachePoints<B extends object>(blocks: B[], marked: Marks): Array<B | BedrockCachePoint> {
  if (marked.size === 0) return blocks;
  return blocks.flatMap((block) => {
    const m = marked.get(block);
    return m ? [block, cachePoint(m.ttl)] : [block];
  });
}

/**
 * Prompt-cache breakpoints (see cache-control.ts) put a cachePoint after the Converse block made from what the client
 * marked, as the Anthropic adapter puts cache_control on that block: a content part's block (a marked text part of a
 * system or assistant message becomes a text block of its own), a message's last block, a tool message's toolResult
 * block (Converse takes no cachePoint inside toolResult content). `breakpoints` lists them in Converse's order (system,
 * then messages) for the ttl-order check.
 */
export function convertToBedrockMessages(
  provider: string,
  messages: readonly OpenAIChatMessage[],
): { system: SystemBlock[] | undefined; messages: BedrockMessage[]; breakpoints: Breakpoint[] } {
  const system: SystemBlock[] = [];
  const systemBreakpoints: Breakpoint[] = [];
  const breakpoints: Breakpoint[] = [];
  const out: BedrockMessage[] = [];

  // Converse requires alternating roles: consecutive messages of one role (parallel tool results) share a turn.
  const push = (role: 'user' | 'assistant', blocks: BedrockContentBlock[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };

  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    checkContentPresent(message, at);
    const marked: Marks = new Map();
    switch (message.role) {
      case 'system':
      case 'developer': {
        const blocks = textBlocks(provider, message.content, at, marked);
        markLast(provider, blocks, message, at, marked);
        system.push(...withCachePoints(blocks, marked));
        systemBreakpoints.push(...marked.values());
        break;
      }
      case 'user': {
        const blocks = userBlocks(provider, message.content, `${at}.content`, marked);
        markLast(provider, blocks, message, at, marked);
        push('user', withCachePoints(blocks, marked));
        breakpoints.push(...marked.values());
        break;
      }
      case 'assistant': {
        const blocks: BedrockContentBlock[] = textBlocks(provider, message.content, at, marked);
        (message.tool_calls ?? []).forEach((call, j) => {
          const input = parseToolArguments(call.function.arguments, `${at}.tool_calls[${j}].function.arguments`);
          blocks.push({ toolUse: { toolUseId: call.id, name: call.function.name, input } });
        });
        markLast(provider, blocks, message, at, marked);
        push('assistant', withCachePoints(blocks, marked));
        breakpoints.push(...marked.values());
        break;
      }
      case 'tool': {
        const block: BedrockContentBlock = { toolResult: { toolUseId: message.tool_call_id, content: [{ text: contentText(message.content) }] } };
        if (Array.isArray(message.content)) {
          message.content.forEach((part, j) => {
            const param = `${at}.content[${j}].cache_control`;
            const cc = cacheControlOf(part, param);
            if (cc) mark(marked, block, param, cc.ttl);
          });
        }
        markLast(provider, [block], message, at, marked);
        push('user', withCachePoints([block], marked));
        breakpoints.push(...marked.values());
        break;
      }
    }
  });
  return { system: system.length > 0 ? system : undefined, messages: out, breakpoints: [...systemBreakpoints, ...breakpoints] };
}

/** A message's own cache_control marks the last block made from it. */
function markLast(provider: string, blocks: readonly object[], message: object, at: string, marked: Marks): void {
  const param = `${at}.cache_control`;
  const cc = cacheControlOf(message, param);
  if (!cc) return;
  if (blocks.length === 0) throw breakpointWithoutContent(provider, param);
  mark(marked, blocks[blocks.length - 1]!, param, cc.ttl);
}

/** One text block of a system or assistant message, or one per non-empty text part when a part carries a cache_control. */
function textBlocks(
  provider: string,
  content: string | ReadonlyArray<OpenAITextPart | OpenAIContentPart> | null | undefined,
  at: string,
  marked: Marks,
): Array<{ text: string }> {
  if (!Array.isArray(content) || !hasMarkedPart(content)) {
    const text = contentText(content);
    return text ? [{ text }] : [];
  }
  const blocks: Array<{ text: string }> = [];
  content.forEach((part, j) => {
    const param = `${at}.content[${j}].cache_control`;
    const cc = cacheControlOf(part, param);
    if (part.type === 'text' && part.text) {
      const block = { text: part.text };
      if (cc) mark(marked, block, param, cc.ttl);
      blocks.push(block);
    } else if (cc) {
      throw breakpointWithoutContent(provider, param);
    }
  });
  return blocks;
}

function userBlocks(provider: string, content: string | OpenAIContentPart[], param: string, marked: Marks): BedrockContentBlock[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  const blocks: BedrockContentBlock[] = [];
  content.forEach((part, j) => {
    const ccParam = `${param}[${j}].cache_control`;
    const cc = cacheControlOf(part, ccParam);
    let block: BedrockContentBlock;
    switch (part.type) {
      case 'text':
        if (!part.text) {
          if (cc) throw breakpointWithoutContent(provider, ccParam);
          return;
        }
        block = { text: part.text };
        break;
      case 'image_url': {
        const inline = parseDataUrl(part.image_url.url);
        const format = inline ? IMAGE_FORMATS[inline.mediaType] : undefined;
        if (!inline || !format) {
          throw new AgentgwError('validation_failed', `Provider "${provider}" takes images as base64 data: URLs of PNG, JPEG, GIF or WebP only.`, {
            param: `${param}[${j}].image_url.url`,
          });
        }
        block = { image: { format, source: { bytes: inline.base64 } } };
        break;
      }
      case 'file': {
        const inline = part.file.file_data ? parseDataUrl(part.file.file_data) : null;
        if (!inline || inline.mediaType !== 'application/pdf') throw unsupportedPart(provider, 'file (other than an inline PDF)', `${param}[${j}]`);
        // Converse document names allow letters, digits, spaces, hyphens, brackets only.
        const name = (part.file.filename ?? `document-${j}`).replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9 \-()[\]]/g, '-') || `document-${j}`;
        block = { document: { format: 'pdf', name, source: { bytes: inline.base64 } } };
        break;
      }
      default:
        throw unsupportedPart(provider, part.type, `${param}[${j}]`);
    }
    if (cc) mark(marked, block, ccParam, cc.ttl);
    blocks.push(block);
  });
  return blocks;
}
