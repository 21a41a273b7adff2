import type { PiiDetector } from '../pii-match.js';
import { findPemPrivateKeys } from './pem-private-key.js';
import { findSecretAssignments, findUrlCredentials } from './secret-assignments.js';
import { findSecretTokens } from './secret-tokens.js';

export const secretDetector: PiiDetector = {
  type: 'secret',
  find(text, out) {
    // Every secret format is at least 12 characters long.
    if (text.length < 12) return;
    if (text.includes('-----BEGIN ')) findPemPrivateKeys(text, out);
    if (text.includes('://')) findUrlCredentials(text, out);
    findSecretTokens(text, out);
    findSecretAssignments(text, out);
  },
};
