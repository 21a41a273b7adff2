// Gemini finishReason -> OpenAI finish_reason; a STOP that carries function calls is a tool_calls finish.
import type { OpenAIFinishReason } from '../openai-format.js';

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

export function mapGeminiFinishReason(reason: string | undefined, hasToolCalls: boolean): OpenAIFinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason && FILTERED.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}
