// How the checks read an Anthropic Messages request.
import { type PromptRequest, membersBesides, promptTokensUpperBound } from '../../../accounting/tokens.js';
import type { PiiPart } from '../../../contract/index.js';
import { EVERY_PART, type PiiScope, type TextVisitor, isObject, visitConversation } from '../../../policy/pii/request-texts.js';
import { visitAll, visitMember } from '../../../policy/pii/walk-all.js';
import type { PolicyView } from '../../../policy/policy-view.js';
import { boundParts, retryMember, retryPart } from '../../../policy/part-facts.js';

type Json = Record<string, unknown>;

/** A message's part: tool results arrive in user turns, and count as user input. */
const partOf = (m: Json): PiiPart => (m.role === 'assistant' ? 'assistant' : m.role === 'system' ? 'system' : 'user');

/**
 * Every member is read (the fail-closed rule, policy/pii/walk-all.ts): the system prompt under `system`, each message
 * whole under its role's part (every block type, known or not, at any depth; signed thinking is the one part skipped),
 * tool definitions and output schemas under `tools`, every other member but `model` as user input (metadata.user_id,
 * MCP server definitions, containers).
 */
export function visitMessagesTexts(body: Json, visit: TextVisitor, scope: PiiScope = EVERY_PART): void {
  for (const key of Object.keys(body)) {
    switch (key) {
      case 'model':
        break;
      case 'system':
        if (scope.has('system')) visitAll(body, key, visit, key);
        break;
      case 'messages':
        visitConversation(body, key, visit, scope, partOf);
        break;
      case 'tools':
      case 'output_format':
        if (scope.has('tools')) visitAll(body, key, visit, key);
        break;
      default:
        if (scope.has('user')) visitMember(body, key, visit, key);
    }
  }
}

/** What the bound counts by name; every other member is tallied whole. */
const COUNTED: ReadonlySet<string> = new Set(['model', 'system', 'messages', 'tools']);

export const messagesPolicyView: PolicyView = {
  endpoint: 'messages',
  producesOutput: true,
  visitTexts: visitMessagesTexts,
  promptTokensUpperBound(body) {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    // The system prompt counts as one more message.
    const all = body.system === undefined ? messages : [{ content: body.system }, ...messages];
    const parts = boundParts(body, 'messages', body.system === undefined ? undefined : 'system');
    return promptTokensUpperBound({ model: body.model as string, messages: all, tools: body.tools as PromptRequest['tools'] }, { tallies: parts.tallies, toolsBytes: parts.toolsBytes, rest: membersBesides(body, COUNTED) });
  },
  // max_tokens is required, and holds the thinking budget.
  requestedMaxOutputTokens: (body) => (typeof body.max_tokens === 'number' ? body.max_tokens : null),
  answers: () => 1,
  retrySubject: (body) => [body.model, retryMember(body, 'system'), retryPart(body, 'messages')],
  withMaxOutputTokens(body, maxTokens) {
    const thinking = body.thinking;
    if (isObject(thinking) && thinking.type === 'enabled' && typeof thinking.budget_tokens === 'number' && thinking.budget_tokens >= maxTokens) {
      // Anthropic wants the thinking budget below max_tokens and at least 1,024 tokens.
      if (maxTokens - 1 < 1024) return null;
      return { ...body, max_tokens: maxTokens, thinking: { ...thinking, budget_tokens: maxTokens - 1 } };
    }
    return { ...body, max_tokens: maxTokens };
  },
};
