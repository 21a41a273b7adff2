// How the checks read an Embeddings request: input texts, no output tokens.
import { type PromptRequest, membersBesides, promptTokensUpperBound } from '../../../accounting/tokens.js';
import { visitRequestTexts } from '../../../policy/pii/request-texts.js';
import type { PolicyView } from '../../../policy/policy-view.js';

/** What the bound counts by name; every other member is tallied whole. */
const COUNTED: ReadonlySet<string> = new Set(['model', 'input']);

export const embeddingsPolicyView: PolicyView = {
  endpoint: 'embeddings',
  producesOutput: false,
  visitTexts: visitRequestTexts,
  // Token ids are text the upstream decodes with the model's tokenizer, which the gateway does not have.
  unreadableText: (body, scope) =>
    scope.has('user') && Array.isArray(body.input) && body.input.some((x) => typeof x === 'number' || Array.isArray(x))
      ? { param: 'input', what: 'Embeddings input given as token ids' }
      : undefined,
  promptTokensUpperBound: (body) => promptTokensUpperBound(body as PromptRequest, { rest: membersBesides(body, COUNTED) }),
  requestedMaxOutputTokens: () => null,
  answers: () => 0,
  retrySubject: (body) => [body.model, body.input ?? null],
  withMaxOutputTokens: () => null,
};
