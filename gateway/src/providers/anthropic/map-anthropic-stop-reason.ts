// Anthropic stop_reason -> OpenAI finish_reason.
import type { OpenAIFinishReason } from '../openai-format.js';

export function mapAnthropicStopReason(reason: string | null | undefined): OpenAIFinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn and anything newer end the turn normally.
      return 'stop';
  }
}
