// Translating adapters take embeddings input as text only; token-id arrays are an OpenAI-only form.
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIEmbeddingsRequest } from '../openai-format.js';

export function embeddingTexts(provider: string, input: OpenAIEmbeddingsRequest['input']): string[] {
  const items = typeof input === 'string' ? [input] : input;
  if (items.length === 0) throw new AgentgwError('validation_failed', 'input must contain at least one string.', { param: 'input' });
  return items.map((item) => {
    if (typeof item !== 'string') {
      throw new AgentgwError('validation_failed', `Provider "${provider}" takes embeddings input as strings only; send text instead of token ids.`, { param: 'input' });
    }
    return item;
  });
}
