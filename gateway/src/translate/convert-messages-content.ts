// Anthropic system prompt and messages -> OpenAI chat messages (tool results become tool messages).
import type {
  OpenAIAssistantMessage,
  OpenAIChatMessage,
  OpenAIContentPart,
  OpenAIToolCall,
  OpenAIToolMessage,
} from '../providers/openai-format.js';
import { invalidField, isObject } from './invalid-field.js';

const TARGET = 'the target provider';

/** `system` as one leading system message, its text blocks joined by a blank line; none when empty. */
export function convertSystem(system: unknown, at = 'system'): OpenAIChatMessage[] {
  if (system == null) return [];
  if (typeof system === 'string') return system ? [{ role: 'system', content: system }] : [];
  if (!Array.isArray(system)) throw invalidField(at, `${at} must be a string or an array of text blocks.`);
  const texts: string[] = [];
  system.forEach((block, j) => {
    if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') {
      throw invalidField(`${at}.${j}`, `${at}.${j} must be a text block ({"type": "text", "text": "..."}).`);
    }
    if (block.text) texts.push(block.text);
  });
  return texts.length > 0 ? [{ role: 'system', content: texts.join('\n\n') }] : [];
}

export function convertMessages(messages: unknown): OpenAIChatMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalidField('messages', 'messages must be a non-empty array of {"role", "content"} objects.');
  }
  const out: OpenAIChatMessage[] = [];
  messages.forEach((message, i) => {
    const at = `messages.${i}`;
    if (!isObject(message)) throw invalidField(at, `${at} must be an object with "role" and "content".`);
    const content = message.content;
    if (content == null || content === '' || (Array.isArray(content) && content.length === 0)) {
      throw invalidField(`${at}.content`, `${at}.content is empty; give the message a non-empty string or at least one content block.`);
    }
    if (typeof content !== 'string' && !Array.isArray(content)) {
      throw invalidField(`${at}.content`, `${at}.content must be a string or an array of content blocks.`);
    }
    if (message.role === 'user') out.push(...userMessages(content, at));
    else if (message.role === 'assistant') {
      const assistant = assistantMessage(content, at);
      if (assistant) out.push(assistant);
    } else if (message.role === 'system') {
      // Mid-conversation system instructions (Claude Code sends them): a system message where they stand.
      out.push(...convertSystem(content, `${at}.content`));
    } else {
      throw invalidField(`${at}.role`, `${at}.role must be "user", "assistant" or "system".`);
    }
  });
  return out;
}

/** Tool results first, as tool messages (OpenAI wants them right after the assistant's tool_calls), then the rest. */
function userMessages(content: string | unknown[], at: string): OpenAIChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const out: OpenAIChatMessage[] = [];
  const parts: OpenAIContentPart[] = [];
  content.forEach((block, j) => {
    const param = `${at}.content.${j}`;
    const type = blockType(block, param);
    switch (type) {
      case 'text':
        parts.push({ type: 'text', text: textOf(block, param) });
        break;
      case 'image':
        parts.push(imagePart(block, param));
        break;
      case 'document':
        parts.push(...documentParts(block, param));
        break;
      case 'tool_result':
        out.push(toolMessage(block, param));
        break;
      default:
        throw unsupportedBlock(type, param, 'user');
    }
  });
  if (parts.length === 1 && parts[0].type === 'text') out.push({ role: 'user', content: parts[0].text });
  else if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

/** Text and tool calls; null when only thinking was there (earlier reasoning cannot be given back to another model). */
function assistantMessage(content: string | unknown[], at: string): OpenAIAssistantMessage | null {
  if (typeof content === 'string') return { role: 'assistant', content };
  let text = '';
  const calls: OpenAIToolCall[] = [];
  content.forEach((block, j) => {
    const param = `${at}.content.${j}`;
    const type = blockType(block, param);
    switch (type) {
      case 'text':
        // Anthropic splits one answer into several text blocks (at citations): joined back as they were written.
        text += textOf(block, param);
        break;
      case 'tool_use': {
        const { id, name, input } = block as Record<string, unknown>;
        if (typeof id !== 'string' || !id) throw invalidField(`${param}.id`, `${param}.id must be the tool call's id (a non-empty string).`);
        if (typeof name !== 'string' || !name) throw invalidField(`${param}.name`, `${param}.name must be the tool's name (a non-empty string).`);
        calls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(input ?? {}) } });
        break;
      }
      case 'thinking':
      case 'redacted_thinking':
        break;
      default:
        throw unsupportedBlock(type, param, 'assistant');
    }
  });
  if (!text && calls.length === 0) return null;
  const message: OpenAIAssistantMessage = { role: 'assistant', content: text || null };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

function toolMessage(block: unknown, param: string): OpenAIToolMessage {
  const { tool_use_id: id, content, is_error: isError } = block as Record<string, unknown>;
  if (typeof id !== 'string' || !id) throw invalidField(`${param}.tool_use_id`, `${param}.tool_use_id must be the id of the tool_use it answers.`);
  let text: string;
  if (content == null) text = '';
  else if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    const texts: string[] = [];
    content.forEach((inner, k) => {
      const innerParam = `${param}.content.${k}`;
      const type = blockType(inner, innerParam);
      if (type === 'text') texts.push(textOf(inner, innerParam));
      else if (type === 'image') {
        throw invalidField(innerParam, `${innerParam} is an image inside a tool_result; ${TARGET} takes only text in tool results: move the image to its own image block in the same user message, after the tool_result.`);
      } else {
        throw invalidField(innerParam, `${innerParam} is a "${type}" block inside a tool_result; ${TARGET} takes only text in tool results: send the result as text.`);
      }
    });
    text = texts.join('\n\n');
  } else {
    throw invalidField(`${param}.content`, `${param}.content must be a string or an array of text blocks.`);
  }
  // The model must still learn that the tool failed: Chat Completions has no is_error flag.
  if (isError === true) text = text ? `Error: ${text}` : 'Error';
  return { role: 'tool', tool_call_id: id, content: text };
}

function imagePart(block: unknown, param: string): OpenAIContentPart {
  const source = (block as { source?: unknown }).source;
  if (!isObject(source)) throw invalidField(`${param}.source`, `${param}.source must be a base64 or url image source.`);
  if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  }
  if (source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
  if (source.type === 'file') {
    throw invalidField(`${param}.source`, `${param}.source is a file_id of Anthropic's Files API, which ${TARGET} cannot read; send the image as base64 or a URL.`);
  }
  throw invalidField(`${param}.source`, `${param}.source must be {"type": "base64", "media_type", "data"} or {"type": "url", "url"}.`);
}

function documentParts(block: unknown, param: string): OpenAIContentPart[] {
  const { source, title, context } = block as Record<string, unknown>;
  if (!isObject(source)) throw invalidField(`${param}.source`, `${param}.source must be a document source.`);
  const sourceParam = `${param}.source`;
  switch (source.type) {
    case 'base64':
      if (source.media_type !== 'application/pdf' || typeof source.data !== 'string') {
        throw invalidField(sourceParam, `${sourceParam} must be a base64 PDF (media_type "application/pdf"); send other documents as text.`);
      }
      return [{ type: 'file', file: { filename: typeof title === 'string' && title ? title : 'document.pdf', file_data: `data:application/pdf;base64,${source.data}` } }];
    case 'text': {
      if (typeof source.data !== 'string') throw invalidField(`${sourceParam}.data`, `${sourceParam}.data must be the document's text.`);
      // Title and context are part of what the model reads about the document.
      const text = [title, context, source.data].filter((s) => typeof s === 'string' && s).join('\n\n');
      return [{ type: 'text', text }];
    }
    case 'content': {
      const inner = source.content;
      if (typeof inner === 'string') return [{ type: 'text', text: inner }];
      if (!Array.isArray(inner)) throw invalidField(`${sourceParam}.content`, `${sourceParam}.content must be a string or an array of text and image blocks.`);
      return inner.map((part, k) => {
        const partParam = `${sourceParam}.content.${k}`;
        const type = blockType(part, partParam);
        if (type === 'text') return { type: 'text', text: textOf(part, partParam) };
        if (type === 'image') return imagePart(part, partParam);
        throw invalidField(partParam, `${partParam} is a "${type}" block; a document's content may hold only text and image blocks.`);
      });
    }
    case 'url':
      throw invalidField(sourceParam, `${sourceParam} is a URL; ${TARGET} cannot fetch documents: send the PDF as base64 (source type "base64").`);
    case 'file':
      throw invalidField(sourceParam, `${sourceParam} is a file_id of Anthropic's Files API, which ${TARGET} cannot read; send the document as base64 or text.`);
    default:
      throw invalidField(sourceParam, `${sourceParam} must be a "base64" PDF, "text", or "content" source.`);
  }
}

function blockType(block: unknown, param: string): string {
  if (!isObject(block) || typeof block.type !== 'string') throw invalidField(param, `${param} must be a content block object with a "type".`);
  return block.type;
}

function textOf(block: unknown, param: string): string {
  const text = (block as { text?: unknown }).text;
  if (typeof text !== 'string') throw invalidField(`${param}.text`, `${param}.text must be a string.`);
  return text;
}

function unsupportedBlock(type: string, param: string, role: 'user' | 'assistant'): Error {
  const allowed = role === 'user' ? 'text, image, document and tool_result' : 'text, tool_use and thinking';
  if (type === 'server_tool_use' || type.endsWith('_tool_result') || type === 'container_upload' || type === 'mcp_tool_use') {
    return invalidField(param, `${param} is a "${type}" block of a tool that Anthropic runs itself; ${TARGET} cannot take it: remove it (or send its outcome as text), or route this conversation to an Anthropic model.`);
  }
  return invalidField(param, `${param} is a "${type}" block, which ${TARGET} cannot take in ${role === 'user' ? 'a user' : 'an assistant'} message; send ${allowed} blocks.`);
}
