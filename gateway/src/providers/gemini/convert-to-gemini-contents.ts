// OpenAI messages -> Gemini systemInstruction and user/model contents, tool calls as functionCall/functionResponse parts.
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIChatMessage, OpenAIContentPart } from '../openai-format.js';
import { checkContentPresent, contentText, parseDataUrl, parseToolArguments, unsupportedPart } from '../shared/message-content.js';
import type { GeminiContent, GeminiPart } from './gemini-api.js';

// Documented sentinel for function calls that did not come from Gemini (or come back without their signature).
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

const EXTENSION_MIME: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif', heic: 'image/heic', pdf: 'application/pdf',
};

export function convertToGeminiContents(
  provider: string,
  messages: readonly OpenAIChatMessage[],
): { systemInstruction?: { parts: Array<{ text: string }> }; contents: GeminiContent[] } {
  const system: string[] = [];
  const contents: GeminiContent[] = [];
  // Gemini matches a functionResponse to its call by name, which OpenAI tool messages do not repeat.
  const toolNames = new Map<string, string>();

  const push = (role: 'user' | 'model', parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((message, i) => {
    checkContentPresent(message, `messages[${i}]`);
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(contentText(message.content));
        break;
      case 'user':
        push('user', userParts(provider, message.content, `messages[${i}].content`));
        break;
      case 'assistant': {
        const parts: GeminiPart[] = [];
        const text = contentText(message.content);
        if (text) parts.push({ text });
        (message.tool_calls ?? []).forEach((call, j) => {
          toolNames.set(call.id, call.function.name);
          const args = parseToolArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`);
          // Gemini's own signature when the call came from Gemini (extra_content), else the sentinel.
          const signature = call.extra_content?.google?.thought_signature;
          parts.push({ functionCall: { name: call.function.name, args }, thoughtSignature: typeof signature === 'string' && signature !== '' ? signature : SKIP_THOUGHT_SIGNATURE });
        });
        push('model', parts);
        break;
      }
      case 'tool': {
        const name = toolNames.get(message.tool_call_id);
        if (!name) {
          throw new AgentgwError('validation_failed', `messages[${i}].tool_call_id "${message.tool_call_id}" matches no tool call of an earlier assistant message.`, {
            param: `messages[${i}].tool_call_id`,
          });
        }
        push('user', [{ functionResponse: { name, response: toolResponse(contentText(message.content)) } }]);
        break;
      }
    }
  });

  const joined = system.filter(Boolean).join('\n\n');
  return joined ? { systemInstruction: { parts: [{ text: joined }] }, contents } : { contents };
}

/** Gemini wants a JSON object as the function response; a JSON object result is passed as-is, anything else wrapped. */
function toolResponse(text: string): Record<string, unknown> {
  if (text.startsWith('{')) {
    try {
      const value = JSON.parse(text) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // Not JSON after all: wrapped below.
    }
  }
  return { content: text };
}

function userParts(provider: string, content: string | OpenAIContentPart[], param: string): GeminiPart[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  const parts: GeminiPart[] = [];
  content.forEach((part, j) => {
    switch (part.type) {
      case 'text':
        if (part.text) parts.push({ text: part.text });
        break;
      case 'image_url': {
        const url = part.image_url.url;
        const inline = parseDataUrl(url);
        if (inline) parts.push({ inlineData: { mimeType: inline.mediaType, data: inline.base64 } });
        else {
          const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase() ?? '';
          parts.push({ fileData: { mimeType: EXTENSION_MIME[ext] ?? 'image/jpeg', fileUri: url } });
        }
        break;
      }
      case 'file': {
        const inline = part.file.file_data ? parseDataUrl(part.file.file_data) : null;
        if (!inline) throw unsupportedPart(provider, 'file (other than inline file_data)', `${param}[${j}]`);
        parts.push({ inlineData: { mimeType: inline.mediaType, data: inline.base64 } });
        break;
      }
      case 'input_audio':
        parts.push({ inlineData: { mimeType: `audio/${part.input_audio.format}`, data: part.input_audio.data } });
        break;
      default:
        throw unsupportedPart(provider, (part as { type: string }).type, `${param}[${j}]`);
    }
  });
  return parts;
}
