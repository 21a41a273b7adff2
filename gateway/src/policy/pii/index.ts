export { detectPii } from './detect-pii.js';
export { redactPii, redactionMarker } from './redact-pii.js';
export { scanRequestPii, redactRequestPii, type TextWalker } from './scan-request.js';
export { EVERY_PART, type PiiScope } from './request-texts.js';
export type { PiiMatch } from './pii-match.js';
export { ALLOW_NOTHING, allowedByAll, compileAllow, type PiiAllow } from './pii-allow.js';
