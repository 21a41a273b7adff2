// OpenAI messages -> Anthropic's system prompt and strictly alternating user/assistant turns.
import type { OpenAIChatMessage, OpenAIContentPart, OpenAITextPart } from '../openai-format.js';
import { checkContentPresent, contentText, parseDataUrl, parseToolArguments, unsupportedPart } from '../shared/message-content.js';
import type { AnthropicCacheControl, AnthropicMessage, AnthropicRequestBlock, AnthropicTextBlock, AnthropicToolResultBlock } from './anthropic-api.js';
import { type Breakpoint, breakpointWithoutContent, cacheControlOf, hasMarkedPart } from './cache-control.js';
import { thinkingBlocks } from '../../translate/carried-thinking.js';

/**
 * Prompt-cache breakpoints (see cache-control.ts) land on the Anthropic block made from what the client marked:
 * - a content part: its block (a text part with a marker becomes a text block of its own, in system and assistant
 *   messages too, whose unmarked text parts are otherwise joined);
 * - a message: the last block made from that message (a string content is one text block);
 * - a part or the whole of a tool message: its tool_result block (Anthropic refuses cache_control inside tool_result
 *   content).
 * When a part's marker and its message's fall on one block, the first one read (the part's) is kept. A system prompt
 * with a breakpoint is sent as text blocks, one per system message (or marked part); without one it stays a string.
 * `breakpoints` lists every marker placed (its param and ttl), system ones first, for the 4-per-request and ttl-order checks.
 */
export function convertToAnthropicMessages(
  provider: string,
  messages: readonly OpenAIChatMessage[],
): { system: string | AnthropicTextBlock[] | undefined; messages: AnthropicMessage[]; breakpoints: Breakpoint[] } {
  const system: AnthropicTextBlock[] = [];
  const systemBreakpoints: Breakpoint[] = [];
  const breakpoints: Breakpoint[] = [];
  const out: AnthropicMessage[] = [];

  // Consecutive messages of one Anthropic role become one turn (tool results of parallel calls must share a turn).
  const push = (role: 'user' | 'assistant', blocks: AnthropicRequestBlock[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };

  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    checkContentPresent(message, at);
    switch (message.role) {
      case 'system':
      case 'developer': {
        const blocks = textBlocks(provider, message.content, at, systemBreakpoints);
        markLast(provider, blocks, message, at, systemBreakpoints);
        system.push(...blocks);
        break;
      }
      case 'user': {
        const blocks = userBlocks(provider, message.content, `${at}.content`, breakpoints);
        markLast(provider, blocks, message, at, breakpoints);
        push('user', blocks);
        break;
      }
      case 'assistant': {
        // Claude's signed thinking first, as it came: Anthropic checks it, and wants it before the tool calls it led to.
        const thinking = message.thinking_blocks == null ? [] : thinkingBlocks(message.thinking_blocks, `${at}.thinking_blocks`);
        const blocks: AnthropicRequestBlock[] = [...thinking, ...textBlocks(provider, message.content, at, breakpoints)];
        (message.tool_calls ?? []).forEach((call, j) => {
          const input = parseToolArguments(call.function.arguments, `${at}.tool_calls[${j}].function.arguments`);
          blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
        });
        markLast(provider, blocks, message, at, breakpoints);
        push('assistant', blocks);
        break;
      }
      case 'tool': {
        const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: message.tool_call_id, content: contentText(message.content) };
        if (Array.isArray(message.content)) {
          message.content.forEach((part, j) => mark(block, cacheControlOf(part, `${at}.content[${j}].cache_control`), `${at}.content[${j}].cache_control`, breakpoints));
        }
        markLast(provider, [block], message, at, breakpoints);
        push('user', [block]);
        break;
      }
    }
  });

  breakpoints.unshift(...systemBreakpoints);
  if (systemBreakpoints.length > 0) return { system, messages: out, breakpoints };
  const joined = system.map((block) => block.text).join('\n\n');
  return { system: joined || undefined, messages: out, breakpoints };
}

/** Puts `cc` on `block` unless it already carries one, and records where the marker came from. */
function mark(block: { cache_control?: AnthropicCacheControl }, cc: AnthropicCacheControl | undefined, param: string, breakpoints: Breakpoint[]): void {
  if (!cc || block.cache_control) return;
  block.cache_control = cc;
  breakpoints.push({ param, ttl: cc.ttl });
}

/** A message's own cache_control marks the last block made from it. */
function markLast(provider: string, blocks: Array<{ cache_control?: AnthropicCacheControl }>, message: object, at: string, breakpoints: Breakpoint[]): void {
  const param = `${at}.cache_control`;
  const cc = cacheControlOf(message, param);
  if (!cc) return;
  if (blocks.length === 0) throw breakpointWithoutContent(provider, param);
  mark(blocks[blocks.length - 1], cc, param, breakpoints);
}

/**
 * The text of a system or assistant message: one block of all its text, or none when empty; when a part carries a
 * cache_control, one block per non-empty text part instead, so that the breakpoint falls where the client put it.
 */
function textBlocks(
  provider: string,
  content: string | ReadonlyArray<OpenAITextPart | OpenAIContentPart> | null | undefined,
  at: string,
  breakpoints: Breakpoint[],
): AnthropicTextBlock[] {
  if (!Array.isArray(content) || !hasMarkedPart(content)) {
    const text = contentText(content);
    return text ? [{ type: 'text', text }] : [];
  }
  const blocks: AnthropicTextBlock[] = [];
  content.forEach((part, j) => {
    const param = `${at}.content[${j}].cache_control`;
    const cc = cacheControlOf(part, param);
    if (part.type === 'text' && part.text) {
      const block: AnthropicTextBlock = { type: 'text', text: part.text };
      mark(block, cc, param, breakpoints);
      blocks.push(block);
    } else if (cc) {
      throw breakpointWithoutContent(provider, param);
    }
  });
  return blocks;
}

function userBlocks(provider: string, content: string | OpenAIContentPart[], param: string, breakpoints: Breakpoint[]): AnthropicRequestBlock[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  const blocks: AnthropicRequestBlock[] = [];
  content.forEach((part, j) => {
    const ccParam = `${param}[${j}].cache_control`;
    const cc = cacheControlOf(part, ccParam);
    let block: AnthropicRequestBlock;
    switch (part.type) {
      case 'text':
        // Anthropic rejects empty text blocks.
        if (!part.text) {
          if (cc) throw breakpointWithoutContent(provider, ccParam);
          return;
        }
        block = { type: 'text', text: part.text };
        break;
      case 'image_url': {
        const inline = parseDataUrl(part.image_url.url);
        block = inline
          ? { type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.base64 } }
          : { type: 'image', source: { type: 'url', url: part.image_url.url } };
        break;
      }
      case 'file': {
        const inline = part.file.file_data ? parseDataUrl(part.file.file_data) : null;
        if (!inline || inline.mediaType !== 'application/pdf') throw unsupportedPart(provider, 'file (other than an inline PDF)', `${param}[${j}]`);
        block = { type: 'document', source: { type: 'base64', media_type: inline.mediaType, data: inline.base64 } };
        break;
      }
      default:
        throw unsupportedPart(provider, part.type, `${param}[${j}]`);
    }
    mark(block, cc, ccParam, breakpoints);
    blocks.push(block);
  });
  return blocks;
}
