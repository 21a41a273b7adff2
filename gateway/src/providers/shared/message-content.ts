// Reading OpenAI message content the same way in every translating adapter.
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIChatMessage, OpenAIContentPart, OpenAITextPart } from '../openai-format.js';

/** The text of a content value; non-text parts are left to the caller. */
export function contentText(content: string | ReadonlyArray<OpenAITextPart | OpenAIContentPart> | null | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) if (part.type === 'text') text += part.text;
  return text;
}

export interface InlineData {
  mediaType: string;
  base64: string;
}

/** `data:image/png;base64,...` -> its media type and payload; null for any other URL. */
export function parseDataUrl(url: string): InlineData | null {
  const match = /^data:([^;,]+)(;[^,]*)?;base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1], base64: match[3] } : null;
}

/** Tool-call arguments are a JSON string in OpenAI format and an object everywhere else. */
export function parseToolArguments(args: string, param: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw new AgentgwError('validation_failed', `${param} must be a JSON object string; it is not valid JSON.`, { param });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AgentgwError('validation_failed', `${param} must be a JSON object string.`, { param });
  }
  return value as Record<string, unknown>;
}

export function unsupportedPart(provider: string, type: string, param: string): AgentgwError {
  return new AgentgwError('validation_failed', `Content parts of type "${type}" are not supported by provider "${provider}"; send text or image_url parts.`, { param });
}

export function stopSequences(stop: string | string[] | null | undefined): string[] | undefined {
  if (stop == null) return undefined;
  return typeof stop === 'string' ? [stop] : stop.length > 0 ? stop : undefined;
}

/** max_completion_tokens supersedes the deprecated max_tokens. */
export function maxOutputTokens(body: { max_completion_tokens?: number | null; max_tokens?: number | null }): number | undefined {
  return body.max_completion_tokens ?? body.max_tokens ?? undefined;
}

/**
 * OpenAI answers 400 to a message whose content is null or missing, unless it is an assistant message with tool_calls.
 * Any other such message leaves nothing to send: refused before calling the provider, naming the field to fix.
 */
export function checkContentPresent(message: OpenAIChatMessage, at: string): void {
  const content: unknown = message.content;
  if (content != null) return;
  const param = `${at}.content`;
  const state = content === null ? 'null' : 'missing';
  switch (message.role) {
    case 'assistant':
      if (message.tool_calls && message.tool_calls.length > 0) return;
      // Legacy function calling (function_call here, role "function" messages) is not translated and is left as before.
      if ((message as { function_call?: unknown }).function_call != null) return;
      throw new AgentgwError('validation_failed', `${param} is ${state} and the assistant message has no tool_calls; give it content (a string or an array of text parts) or tool_calls.`, { param });
    case 'system':
    case 'developer':
    case 'user':
    case 'tool':
      throw new AgentgwError('validation_failed', `${param} is ${state}; a ${message.role} message needs content: send a string or an array of ${message.role === 'user' ? 'content' : 'text'} parts.`, { param });
  }
}
