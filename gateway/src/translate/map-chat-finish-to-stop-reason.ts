// OpenAI finish_reason -> Anthropic stop_reason.
import type { MessagesStopReason } from './messages-api.js';

/**
 * `calledTools`: the answer ends with tool calls. Some OpenAI-compatible servers say "stop" then, while Anthropic clients
 * read stop_reason "tool_use" as the signal to run the tools.
 */
export function mapChatFinishToStopReason(reason: string | null | undefined, calledTools = false): MessagesStopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      // stop, null and anything newer end the turn normally (OpenAI does not say which stop sequence matched).
      return calledTools ? 'tool_use' : 'end_turn';
  }
}
