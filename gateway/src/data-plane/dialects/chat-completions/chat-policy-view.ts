// How the checks read a Chat Completions request.
import { type PromptRequest, membersBesides, promptTokensUpperBound, requestedMaxOutputTokens } from '../../../accounting/tokens.js';
import { visitRequestTexts } from '../../../policy/pii/request-texts.js';
import type { PolicyView } from '../../../policy/policy-view.js';
import { boundParts, retryPart } from '../../../policy/part-facts.js';

/** What the bound counts by name; every other member is tallied whole. */
const COUNTED: ReadonlySet<string> = new Set(['model', 'messages', 'tools', 'functions', 'response_format']);

export const chatPolicyView: PolicyView = {
  endpoint: 'chat.completions',
  producesOutput: true,
  visitTexts: visitRequestTexts,
  promptTokensUpperBound(body) {
    // Options written out, not spread: a spread of objects of several shapes is a slow copy on every request.
    const parts = boundParts(body, 'messages');
    return promptTokensUpperBound(body as PromptRequest, { tallies: parts.tallies, toolsBytes: parts.toolsBytes, rest: membersBesides(body, COUNTED) });
  },
  requestedMaxOutputTokens: (body) => requestedMaxOutputTokens(body as PromptRequest),
  answers: (body) => (typeof body.n === 'number' && body.n > 1 ? body.n : 1),
  retrySubject: (body) => [body.model, retryPart(body, 'messages')],
  withMaxOutputTokens(body, maxTokens) {
    // The current field, unless the client wrote the older one only (servers that predate max_completion_tokens).
    const field = body.max_tokens != null && body.max_completion_tokens == null ? 'max_tokens' : 'max_completion_tokens';
    return { ...body, [field]: maxTokens };
  },
};
