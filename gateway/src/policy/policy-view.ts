// What a dialect tells the checks about one request. Checks read only this, so every dialect gets every check.
import type { PiiScope, TextVisitor } from './pii/request-texts.js';

export type Endpoint = 'chat.completions' | 'embeddings' | 'messages' | 'responses' | 'gemini' | 'mcp';

/**
 * The policy view of a dialect: functions over a request body of that dialect. One object per dialect, not per request,
 * so reading a request through it allocates nothing.
 */
export interface PolicyView {
  readonly endpoint: Endpoint;
  /**
   * Visits every text in the parts of `scope` (rules.pii_scope) that the PII rules read; a returned string replaces the
   * text in place (on a copy being redacted).
   */
  visitTexts(body: Record<string, unknown>, visit: TextVisitor, scope: PiiScope): void;
  /**
   * Where the request holds, in the parts of `scope`, text the upstream reads that the PII rules cannot (embeddings
   * input as token ids): the field to name in the refusal, or undefined. Absent: every part can be read.
   */
  unreadableText?(body: Record<string, unknown>, scope: PiiScope): { param: string; what: string } | undefined;
  /** Prompt tokens no upstream tokenizer can exceed (see accounting/tokens.ts). */
  promptTokensUpperBound(body: Record<string, unknown>): number;
  /** The output limit the request sets (null: the model's maximum); always null when it produces no output tokens. */
  requestedMaxOutputTokens(body: Record<string, unknown>): number | null;
  /** How many answers may each run to the output limit (chat's `n`). */
  answers(body: Record<string, unknown>): number;
  /** False when the request produces no output tokens (embeddings). */
  readonly producesOutput: boolean;
  /** What makes two requests "the same" for retry blocking: model and conversation. */
  retrySubject(body: Record<string, unknown>): unknown;
  /**
   * A copy of the body with its output limit lowered to `maxTokens` (rules.clamp_output), or null when this request cannot
   * be lowered that far (Anthropic's thinking budget must stay below max_tokens).
   */
  withMaxOutputTokens(body: Record<string, unknown>, maxTokens: number): Record<string, unknown> | null;
}
