// How the checks read an Embeddings request: input texts, no output tokens.
import { type PromptRequest, promptTokensUpperBound } from '../../../accounting/tokens.js';
import { visitRequestTexts } from '../../../policy/pii/request-texts.js';
import type { PolicyView } from '../../../policy/policy-view.js';

export const embeddingsPolicyView: PolicyView = {
  endpoint: 'embeddings',
  producesOutput: false,
  visitTexts: visitRequestTexts,
  promptTokensUpperBound: (body) => promptTokensUpperBound(body as PromptRequest),
  requestedMaxOutputTokens: () => null,
  answers: () => 0,
  retrySubject: (body) => [body.model, body.input ?? null],
  withMaxOutputTokens: () => null,
};
