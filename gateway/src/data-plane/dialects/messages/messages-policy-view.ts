// How the checks read an Anthropic Messages request.
import { type PromptRequest, promptTokensUpperBound } from '../../../accounting/tokens.js';
import type { PiiPart } from '../../../contract/index.js';
import { EVERY_PART, type PiiScope, type TextVisitor, isObject, visitField, visitStrings } from '../../../policy/pii/request-texts.js';
import type { PolicyView } from '../../../policy/policy-view.js';
import { boundParts, retryMember, retryPart } from '../../../policy/part-facts.js';

type Json = Record<string, unknown>;

/** Text of content: a string, or blocks (text, tool results and their blocks, tool inputs, plain-text documents). */
function visitContent(holder: Json, key: string, visit: TextVisitor): void {
  const content = holder[key];
  if (typeof content === 'string') {
    visitField(holder, key, visit);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const block of content) {
    if (!isObject(block)) continue;
    switch (block.type) {
      case 'text':
        visitField(block, 'text', visit);
        break;
      case 'tool_result':
        visitContent(block, 'content', visit);
        break;
      case 'tool_use':
        if (isObject(block.input)) visitStrings(block.input, visit, 'input');
        break;
      case 'document':
        if (isObject(block.source) && block.source.type === 'text') visitField(block.source, 'data', visit);
        break;
      default:
        // Thinking blocks are signed by the model that wrote them: an edit would make the upstream refuse the request.
        break;
    }
  }
}

/** Tool results arrive in user turns, and count as user input. */
const partOf = (role: unknown): PiiPart => (role === 'assistant' ? 'assistant' : role === 'system' ? 'system' : 'user');

export function visitMessagesTexts(body: Json, visit: TextVisitor, scope: PiiScope = EVERY_PART): void {
  if (scope.has('system')) visitContent(body, 'system', visit);
  if (Array.isArray(body.messages)) for (const m of body.messages) if (isObject(m) && scope.has(partOf(m.role))) visitContent(m, 'content', visit);
  if (scope.has('tools') && Array.isArray(body.tools)) {
    for (const tool of body.tools) if (isObject(tool)) visitStrings(tool, visit, 'tools');
  }
  // The end-user id travels upstream with the request.
  if (scope.has('user') && isObject(body.metadata)) visitField(body.metadata, 'user_id', visit);
}

export const messagesPolicyView: PolicyView = {
  endpoint: 'messages',
  producesOutput: true,
  visitTexts: visitMessagesTexts,
  promptTokensUpperBound(body) {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    // The system prompt counts as one more message.
    const all = body.system === undefined ? messages : [{ content: body.system }, ...messages];
    const parts = boundParts(body, 'messages', body.system === undefined ? undefined : all[0]);
    return promptTokensUpperBound({ model: body.model as string, messages: all, tools: body.tools as PromptRequest['tools'] }, parts);
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
