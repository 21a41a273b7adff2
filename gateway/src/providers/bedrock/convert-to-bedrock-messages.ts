// OpenAI messages -> Converse system blocks and alternating user/assistant messages with toolUse/toolResult blocks.
import type { OpenAIChatMessage, OpenAIContentPart } from '../openai-format.js';
import { AgentgwError } from '../../contract/errors.js';
import { contentText, parseDataUrl, parseToolArguments, unsupportedPart } from '../shared/message-content.js';
import type { BedrockContentBlock, BedrockMessage } from './bedrock-api.js';

const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

export function convertToBedrockMessages(
  provider: string,
  messages: readonly OpenAIChatMessage[],
): { system: Array<{ text: string }> | undefined; messages: BedrockMessage[] } {
  const system: Array<{ text: string }> = [];
  const out: BedrockMessage[] = [];

  // Converse requires alternating roles: consecutive messages of one role (parallel tool results) share a turn.
  const push = (role: 'user' | 'assistant', blocks: BedrockContentBlock[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };

  messages.forEach((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = contentText(message.content);
        if (text) system.push({ text });
        break;
      }
      case 'user':
        push('user', userBlocks(provider, message.content, `messages[${i}].content`));
        break;
      case 'assistant': {
        const blocks: BedrockContentBlock[] = [];
        const text = contentText(message.content);
        if (text) blocks.push({ text });
        (message.tool_calls ?? []).forEach((call, j) => {
          const input = parseToolArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`);
          blocks.push({ toolUse: { toolUseId: call.id, name: call.function.name, input } });
        });
        push('assistant', blocks);
        break;
      }
      case 'tool':
        push('user', [{ toolResult: { toolUseId: message.tool_call_id, content: [{ text: contentText(message.content) }] } }]);
        break;
    }
  });
  return { system: system.length > 0 ? system : undefined, messages: out };
}

function userBlocks(provider: string, content: string | OpenAIContentPart[], param: string): BedrockContentBlock[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  const blocks: BedrockContentBlock[] = [];
  content.forEach((part, j) => {
    switch (part.type) {
      case 'text':
        if (part.text) blocks.push({ text: part.text });
        break;
      case 'image_url': {
        const inline = parseDataUrl(part.image_url.url);
        const format = inline ? IMAGE_FORMATS[inline.mediaType] : undefined;
        if (!inline || !format) {
          throw new AgentgwError('validation_failed', `Provider "${provider}" takes images as base64 data: URLs of PNG, JPEG, GIF or WebP only.`, {
            param: `${param}[${j}].image_url.url`,
          });
        }
        blocks.push({ image: { format, source: { bytes: inline.base64 } } });
        break;
      }
      case 'file': {
        const inline = part.file.file_data ? parseDataUrl(part.file.file_data) : null;
        if (!inline || inline.mediaType !== 'application/pdf') throw unsupportedPart(provider, 'file (other than an inline PDF)', `${param}[${j}]`);
        // Converse document names allow letters, digits, spaces, hyphens, brackets only.
        const name = (part.file.filename ?? `document-${j}`).replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9 \-()[\]]/g, '-') || `document-${j}`;
        blocks.push({ document: { format: 'pdf', name, source: { bytes: inline.base64 } } });
        break;
      }
      default:
        throw unsupportedPart(provider, part.type, `${param}[${j}]`);
    }
  });
  return blocks;
}
