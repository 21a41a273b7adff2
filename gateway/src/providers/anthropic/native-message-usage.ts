// The usage of a Messages API answer passed through as sent (Anthropic, or Claude on Bedrock).
import type { ProviderIdentity } from '../shared/provider-identity.js';
import { badUpstreamResponse } from '../shared/upstream-failure.js';
import type { MessagesCallContext, Usage } from '../spec.js';
import type { AnthropicResponse } from './anthropic-api.js';
import { anthropicPromptUsage } from './convert-anthropic-usage.js';

export function nativeMessageUsage(identity: ProviderIdentity, message: AnthropicResponse, ctx: MessagesCallContext): Usage {
  if (!Array.isArray(message.content) || !message.usage) throw badUpstreamResponse(identity, 'answered with a message that has no content or usage.');
  const prompt = anthropicPromptUsage(message.usage);
  const reported = typeof message.usage.input_tokens === 'number' && typeof message.usage.output_tokens === 'number';
  return { ...prompt, prompt_tokens: prompt.prompt_tokens ?? ctx.estimatePromptTokens(), completion_tokens: message.usage.output_tokens ?? 0, estimated: !reported };
}
