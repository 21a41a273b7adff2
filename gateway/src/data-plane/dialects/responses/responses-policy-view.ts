// How the checks read an OpenAI Responses request (its input already expanded with the stored conversation).
import { type BoundParts, type PromptRequest, membersBesides, promptTokensUpperBound } from '../../../accounting/tokens.js';
import type { PiiPart } from '../../../contract/index.js';
import { EVERY_PART, type PiiScope, type TextVisitor, isObject } from '../../../policy/pii/request-texts.js';
import { carriesNoText, visitAll, visitMember } from '../../../policy/pii/walk-all.js';
import type { PolicyView } from '../../../policy/policy-view.js';
import { boundParts, retryMember, retryPart } from '../../../policy/part-facts.js';

type Json = Record<string, unknown>;

const roleOf = (role: unknown): PiiPart => (role === 'assistant' ? 'assistant' : role === 'system' || role === 'developer' ? 'system' : 'user');

/** Members of a call item that hold what the tool gave back, not what the model proposed. */
const CALL_RESULT_MEMBERS: ReadonlySet<string> = new Set(['output', 'outputs', 'results', 'error']);

/**
 * Reads one input item whole under its part: messages under their role; what the model proposed (`*_call` items,
 * reasoning) under `assistant`, except what a tool gave back inside a call item (`output`, `results`, ...), which is user
 * input as every tool output is; `additional_tools` under `tools`; any other type, known or not, as user input.
 */
function visitItem(input: unknown[], i: number, visit: TextVisitor, scope: PiiScope): void {
  const item = input[i];
  if (!isObject(item)) {
    if (scope.has('user')) visitAll(input, i, visit, 'input');
    return;
  }
  const type = item.type;
  let part: PiiPart;
  if (type === undefined || type === 'message') part = roleOf(item.role);
  else if (type === 'reasoning') part = 'assistant';
  else if (type === 'additional_tools') part = 'tools';
  else if (typeof type === 'string' && (type.endsWith('_call') || type === 'mcp_approval_request')) {
    for (const key of Object.keys(item)) {
      if (carriesNoText(item, key, item[key])) continue;
      if (scope.has(CALL_RESULT_MEMBERS.has(key) ? 'user' : 'assistant')) visitMember(item, key, visit, 'input');
    }
    return;
  } else part = 'user';
  if (scope.has(part)) visitAll(input, i, visit, 'input');
}

/**
 * Every member is read (the fail-closed rule, policy/pii/walk-all.ts): `instructions` under `system`, the input item by
 * item, tool definitions and the output format under `tools`, every other member but `model` as user input (end-user ids,
 * metadata, prompt variables).
 */
export function visitResponsesTexts(body: Json, visit: TextVisitor, scope: PiiScope = EVERY_PART): void {
  for (const key of Object.keys(body)) {
    switch (key) {
      case 'model':
        break;
      case 'instructions':
        if (scope.has('system')) visitAll(body, key, visit, key);
        break;
      case 'input': {
        const input = body.input;
        if (Array.isArray(input)) for (let i = 0; i < input.length; i++) visitItem(input, i, visit, scope);
        else if (scope.has('user')) visitAll(body, key, visit, key);
        break;
      }
      case 'tools':
      case 'text':
        if (scope.has('tools')) visitAll(body, key, visit, key);
        break;
      default:
        if (scope.has('user')) visitMember(body, key, visit, key);
    }
  }
}

/** What the bound counts by name; every other member is tallied whole (`text` holds the output format, counted as such). */
const COUNTED: ReadonlySet<string> = new Set(['model', 'instructions', 'input', 'tools', 'text']);

export const responsesPolicyView: PolicyView = {
  endpoint: 'responses',
  producesOutput: true,
  visitTexts: visitResponsesTexts,
  promptTokensUpperBound(body) {
    const input = body.input;
    const items: unknown[] = typeof input === 'string' ? [{ content: input }] : Array.isArray(input) ? input : [];
    // The instructions count as one more message.
    const all = body.instructions != null ? [{ content: body.instructions }, ...items] : items;
    const parts: BoundParts = Array.isArray(input) ? boundParts(body, 'input', all === items ? undefined : 'instructions') : {};
    return promptTokensUpperBound({ model: body.model as string, messages: all, tools: body.tools as PromptRequest['tools'], response_format: (body.text as Json | undefined)?.format }, { tallies: parts.tallies, toolsBytes: parts.toolsBytes, rest: membersBesides(body, COUNTED) });
  },
  // max_output_tokens holds the reasoning tokens too.
  requestedMaxOutputTokens: (body) => (typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null),
  answers: () => 1,
  retrySubject: (body) => [body.model, retryMember(body, 'instructions'), retryPart(body, 'input')],
  withMaxOutputTokens: (body, maxTokens) => ({ ...body, max_output_tokens: maxTokens }),
};
