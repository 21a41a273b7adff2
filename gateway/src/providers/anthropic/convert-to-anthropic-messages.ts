// OpenAI messages -> Anthropic's system prompt and strictly alternating user/assistant turns.
import type { OpenAIChatMessage, OpenAIContentPart } from '../openai-format.js';
import { contentText, parseDataUrl, parseToolArguments, unsupportedPart } from '../shared/message-content.js';
import type { AnthropicMessage, AnthropicRequestBlock } from './anthropic-api.js';

export function convertToAnthropicMessages(
  provider: string,
  messages: readonly OpenAIChatMessage[],
): { system: string | undefined; messages: AnthropicMessage[] } {
  const system: string[] = [];
  const out: AnthropicMessage[] = [];

  // Consecutive messages of one Anthropic role become one turn (tool results of parallel calls must share a turn).
  const push = (role: 'user' | 'assistant', blocks: AnthropicRequestBlock[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };

  messages.forEach((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(contentText(message.content));
        break;
      case 'user':
        push('user', userBlocks(provider, message.content, `messages[${i}].content`));
        break;
      case 'assistant': {
        const blocks: AnthropicRequestBlock[] = [];
        const text = contentText(message.content);
        if (text) blocks.push({ type: 'text', text });
        (message.tool_calls ?? []).forEach((call, j) => {
          const input = parseToolArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`);
          blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
        });
        push('assistant', blocks);
        break;
      }
      case 'tool':
        push('user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: contentText(message.content) }]);
        break;
    }
  });

  const joined = system.filter(Boolean).join('\n\n');
  return { system: joined || undefined, messages: out };
}

function userBlocks(provider: string, content: string | OpenAIContentPart[], param: string): AnthropicRequestBlock[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  const blocks: AnthropicRequestBlock[] = [];
  content.forEach((part, j) => {
    switch (part.type) {
      case 'text':
        // Anthropic rejects empty text blocks.
        if (part.text) blocks.push({ type: 'text', text: part.text });
        break;
      case 'image_url': {
        const inline = parseDataUrl(part.image_url.url);
        blocks.push(
          inline
            ? { type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.base64 } }
            : { type: 'image', source: { type: 'url', url: part.image_url.url } },
        );
        break;
      }
      case 'file': {
        const inline = part.file.file_data ? parseDataUrl(part.file.file_data) : null;
        if (!inline || inline.mediaType !== 'application/pdf') throw unsupportedPart(provider, 'file (other than an inline PDF)', `${param}[${j}]`);
        blocks.push({ type: 'document', source: { type: 'base64', media_type: inline.mediaType, data: inline.base64 } });
        break;
      }
      default:
        throw unsupportedPart(provider, part.type, `${param}[${j}]`);
    }
  });
  return blocks;
}
