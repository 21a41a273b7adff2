// Wire types of Bedrock Runtime's Converse / ConverseStream and the InvokeModel embedding bodies.

export type BedrockContentBlock =
  | { text: string }
  | { image: { format: string; source: { bytes: string } } }
  | { document: { format: string; name: string; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: Record<string, unknown> } }
  | { toolResult: { toolUseId: string; content: Array<{ text: string }>; status?: 'success' | 'error' } }
  | { reasoningContent: unknown }
  | BedrockCachePoint;

/** A prompt-cache checkpoint: the prefix up to the block before it is cached. */
export interface BedrockCachePoint {
  cachePoint: { type: 'default'; ttl?: '5m' | '1h' };
}

export interface BedrockMessage {
  role: 'user' | 'assistant';
  content: BedrockContentBlock[];
}

export interface BedrockToolSpec {
  toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } };
}

export type BedrockToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface BedrockConverseRequest {
  messages: BedrockMessage[];
  system?: Array<{ text: string } | BedrockCachePoint>;
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: Array<BedrockToolSpec | BedrockCachePoint>; toolChoice?: BedrockToolChoice };
  outputConfig?: { textFormat: { type: 'json_schema'; structure: { jsonSchema: { schema: string; name?: string; description?: string } } } };
}

export interface BedrockUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
  /** Cache writes by lifetime (1h before 5m); empty or absent when nothing was written. */
  cacheDetails?: Array<{ ttl?: string; inputTokens?: number }>;
}

export interface BedrockConverseResponse {
  output?: { message?: BedrockMessage };
  stopReason?: string;
  usage?: BedrockUsage;
  metrics?: { latencyMs?: number };
}

/** ConverseStream event payloads, keyed by the :event-type header. */
export interface BedrockStreamPayloads {
  messageStart: { role: string };
  contentBlockStart: { contentBlockIndex: number; start?: { toolUse?: { toolUseId: string; name: string } } };
  contentBlockDelta: { contentBlockIndex: number; delta: { text?: string; toolUse?: { input: string }; reasoningContent?: unknown } };
  contentBlockStop: { contentBlockIndex: number };
  messageStop: { stopReason?: string };
  metadata: { usage?: BedrockUsage; metrics?: { latencyMs?: number } };
}

export interface TitanEmbeddingResponse {
  embedding: number[];
  inputTextTokenCount?: number;
}

export interface CohereEmbeddingResponse {
  embeddings: number[][] | { float?: number[][] };
}
