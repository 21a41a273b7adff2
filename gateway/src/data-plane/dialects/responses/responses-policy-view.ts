// How the checks read an OpenAI Responses request (its input already expanded with the stored conversation).
import { type PromptRequest, promptTokensUpperBound } from '../../../accounting/tokens.js';
import type { PiiPart } from '../../../contract/index.js';
import { EVERY_PART, type PiiScope, type TextVisitor, isObject, visitContent, visitField, visitStrings } from '../../../policy/pii/request-texts.js';
import type { PolicyView } from '../../../policy/policy-view.js';
import { boundParts, retryMember, retryPart } from '../../../policy/part-facts.js';

type Json = Record<string, unknown>;

const roleOf = (role: unknown): PiiPart => (role === 'assistant' ? 'assistant' : role === 'system' || role === 'developer' ? 'system' : 'user');

/** The part of the request an input item belongs to; tool outputs count as user input, as on the other dialects. */
function partOf(item: Json): PiiPart | null {
  switch (item.type) {
    case undefined:
    case 'message':
      return roleOf(item.role);
    case 'function_call':
    case 'custom_tool_call':
      return 'assistant';
    case 'function_call_output':
    case 'custom_tool_call_output':
      return 'user';
    case 'additional_tools':
      return 'tools';
    default:
      // Reasoning is signed or encrypted by the model that wrote it; built-in tool records are the provider's own.
      return null;
  }
}

function visitItem(item: Json, visit: TextVisitor): void {
  switch (item.type) {
    case 'function_call':
      visitField(item, 'arguments', visit);
      break;
    case 'custom_tool_call':
      visitField(item, 'input', visit);
      break;
    case 'function_call_output':
    case 'custom_tool_call_output':
      visitContent(item, 'output', visit);
      break;
    case 'additional_tools':
      if (Array.isArray(item.tools)) visitStrings(item.tools, visit, 'tools');
      break;
    default:
      visitContent(item, 'content', visit);
  }
}

export function visitResponsesTexts(body: Json, visit: TextVisitor, scope: PiiScope = EVERY_PART): void {
  if (scope.has('system')) visitField(body, 'instructions', visit);
  const input = body.input;
  if (typeof input === 'string') {
    if (scope.has('user')) visitField(body, 'input', visit);
  } else if (Array.isArray(input)) {
    for (const item of input) {
      if (!isObject(item)) continue;
      const part = partOf(item);
      if (part !== null && scope.has(part)) visitItem(item, visit);
    }
  }
  if (scope.has('tools') && Array.isArray(body.tools)) {
    for (const tool of body.tools) if (isObject(tool)) visitStrings(tool, visit, 'tools');
  }
  if (!scope.has('user')) return;
  // End-user ids travel upstream with the request.
  visitField(body, 'user', visit);
  visitField(body, 'safety_identifier', visit);
}

export const responsesPolicyView: PolicyView = {
  endpoint: 'responses',
  producesOutput: true,
  visitTexts: visitResponsesTexts,
  promptTokensUpperBound(body) {
    const input = body.input;
    const items: unknown[] = typeof input === 'string' ? [{ content: input }] : Array.isArray(input) ? input : [];
    // The instructions count as one more message.
    const all = typeof body.instructions === 'string' ? [{ content: body.instructions }, ...items] : items;
    const parts = Array.isArray(input) ? boundParts(body, 'input', all === items ? undefined : all[0]) : {};
    return promptTokensUpperBound({ model: body.model as string, messages: all, tools: body.tools as PromptRequest['tools'], response_format: (body.text as Json | undefined)?.format }, parts);
  },
  // max_output_tokens holds the reasoning tokens too.
  requestedMaxOutputTokens: (body) => (typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null),
  answers: () => 1,
  retrySubject: (body) => [body.model, retryMember(body, 'instructions'), retryPart(body, 'input')],
  withMaxOutputTokens: (body, maxTokens) => ({ ...body, max_output_tokens: maxTokens }),
};
