// OpenAI embeddings requests -> embedContent (one text) or batchEmbedContents (several), and back.
import type { OpenAIEmbeddingsRequest, OpenAIEmbeddingsResponse } from '../openai-format.js';
import { encodeEmbedding } from '../shared/embedding-encoding.js';
import type { GeminiBatchEmbedContentsResponse, GeminiEmbedContentRequest, GeminiEmbedContentResponse } from './gemini-api.js';
import { geminiModelPath, geminiModelResource } from './gemini-model-path.js';

export function geminiEmbeddingsRequest(model: string, texts: string[], body: OpenAIEmbeddingsRequest): { path: string; body: unknown } {
  const item = (text: string): GeminiEmbedContentRequest => ({
    content: { parts: [{ text }] },
    ...(body.dimensions ? { outputDimensionality: body.dimensions } : {}),
  });
  if (typeof body.input === 'string') return { path: geminiModelPath(model, 'embedContent'), body: item(texts[0]) };
  const resource = geminiModelResource(model);
  return {
    path: geminiModelPath(model, 'batchEmbedContents'),
    body: { requests: texts.map((text) => ({ model: resource, ...item(text) })) },
  };
}

/** The vectors of either answer shape, or null when the body has neither. */
export function geminiEmbeddingVectors(json: Partial<GeminiEmbedContentResponse & GeminiBatchEmbedContentsResponse>): number[][] | null {
  if (Array.isArray(json.embeddings)) return json.embeddings.map((e) => e.values);
  if (json.embedding && Array.isArray(json.embedding.values)) return [json.embedding.values];
  return null;
}

export function toOpenAIEmbeddings(model: string, vectors: number[][], body: OpenAIEmbeddingsRequest, promptTokens: number): OpenAIEmbeddingsResponse {
  return {
    object: 'list',
    data: vectors.map((values, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(values, body.encoding_format) })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}
