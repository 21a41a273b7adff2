// The policy view of an MCP tool call (/mcp tools/call): the same checks table as model calls reads it. A call is one
// unit priced per call: its "prompt" is one token at the tool's price, it produces no output tokens.
import type { ModelPrice } from '../accounting/prices.js';
import type { PolicyView } from './policy-view.js';
import { visitField } from './pii/request-texts.js';

/** What the checks see of a tool call: the tool as `server/tool`, and its arguments as JSON text (PII reads them decoded). */
export interface ToolCallBody extends Record<string, unknown> {
  tool: string;
  /** JSON text of the arguments: the PII module reads a field named `arguments` as JSON (each string labelled by its key). */
  arguments: string;
}

export function toolCallBody(serverTool: string, args: Record<string, unknown> | undefined): ToolCallBody {
  return { tool: serverTool, arguments: JSON.stringify(args ?? {}) };
}

/** The arguments to forward: the client's, or a redacted copy. */
export function toolCallArguments(body: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(body.arguments as string) as Record<string, unknown>;
}

/** A price of `usd` per call in the shape of a model price: one prompt token at that price, no output. */
export function perCallPrice(usd: number): ModelPrice {
  return { input: usd * 1e6, output: 0, max_output_tokens: 0 };
}

export const toolCallView: PolicyView = {
  endpoint: 'mcp',
  visitTexts(body, visit, scope) {
    // CONTRACT: MCP tool arguments (and results) count as `user`.
    if (scope.has('user')) visitField(body, 'arguments', visit);
  },
  promptTokensUpperBound: () => 1,
  requestedMaxOutputTokens: () => null,
  answers: () => 0,
  producesOutput: false,
  retrySubject: (body) => ({ tool: body.tool, arguments: body.arguments }),
  withMaxOutputTokens: () => null,
};
