// Local token counts (o200k_base) for upstreams that report none: billing then marks them estimated.
import { countTokens } from '../../tokenizer/o200k.js';
import type { OpenAIChatMessage, OpenAIChatRequest, OpenAIEmbeddingsRequest } from '../openai-format.js';

// Chat framing per message (role, separators) and per reply, as OpenAI counts them.
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_REPLY = 3;
// A low-detail image costs 85 tokens at OpenAI; the floor when a provider reports nothing.
const TOKENS_PER_IMAGE = 85;

export { countTokens };

function messageText(message: OpenAIChatMessage): { text: string; images: number } {
  let text = '';
  let images = 0;
  const content = message.content;
  if (typeof content === 'string') text += content;
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (part.type === 'text') text += part.text;
      else if (part.type === 'image_url') images++;
    }
  }
  if (message.role === 'assistant' && message.tool_calls) {
    for (const call of message.tool_calls) text += `${call.function.name}${call.function.arguments}`;
  }
  return { text, images };
}

export function estimatePromptTokens(body: OpenAIChatRequest): number {
  let total = TOKENS_PER_REPLY;
  for (const message of body.messages) {
    const { text, images } = messageText(message);
    total += TOKENS_PER_MESSAGE + countTokens(text) + images * TOKENS_PER_IMAGE;
  }
  if (body.tools?.length) total += countTokens(JSON.stringify(body.tools));
  return total;
}

export function estimateEmbeddingTokens(input: OpenAIEmbeddingsRequest['input']): number {
  if (typeof input === 'string') return countTokens(input);
  let total = 0;
  for (const item of input) {
    if (typeof item === 'string') total += countTokens(item);
    else if (typeof item === 'number') total += 1;
    else total += item.length;
  }
  return total;
}
