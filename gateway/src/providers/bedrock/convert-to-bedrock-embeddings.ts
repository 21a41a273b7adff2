// Bedrock embeddings go through InvokeModel with each model family's own body: Titan (one text per call) or Cohere (a batch).
import { AgentgwError } from '../../contract/errors.js';
import type { CohereEmbeddingResponse, TitanEmbeddingResponse } from './bedrock-api.js';

export type BedrockEmbeddingFamily = 'titan' | 'cohere';

export function bedrockEmbeddingFamily(provider: string, model: string): BedrockEmbeddingFamily {
  // Cross-region ids carry a geography prefix ("us.", "eu."); ARNs end with the model id.
  const id = model.slice(model.lastIndexOf('/') + 1);
  if (/(^|\.)amazon\.titan-embed/.test(id)) return 'titan';
  if (/(^|\.)cohere\.embed/.test(id)) return 'cohere';
  throw new AgentgwError('unknown_model', `Provider "${provider}" supports embeddings with amazon.titan-embed-* and cohere.embed-* models only.`, { param: 'model' });
}

export function titanEmbeddingBody(text: string, dimensions: number | undefined): string {
  return JSON.stringify(dimensions ? { inputText: text, dimensions } : { inputText: text });
}

export function cohereEmbeddingBody(texts: string[]): string {
  return JSON.stringify({ texts, input_type: 'search_document' });
}

export function titanVector(json: Partial<TitanEmbeddingResponse>): { values: number[]; tokens: number | undefined } | null {
  return Array.isArray(json.embedding) ? { values: json.embedding, tokens: json.inputTextTokenCount } : null;
}

export function cohereVectors(json: Partial<CohereEmbeddingResponse>): number[][] | null {
  const e = json.embeddings;
  if (Array.isArray(e)) return e;
  if (e && Array.isArray(e.float)) return e.float;
  return null;
}
