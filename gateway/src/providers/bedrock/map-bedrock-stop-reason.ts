// Bedrock Converse stopReason -> OpenAI finish_reason.
import type { OpenAIFinishReason } from '../openai-format.js';

export function mapBedrockStopReason(reason: string | undefined): OpenAIFinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}
