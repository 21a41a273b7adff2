// The checks every data-plane request passes after auth, headers and body validation, in CONTRACT's decision order.
import type { Check } from './admitting.js';
import { budgetCheck } from './budget.js';
import { costCapCheck } from './cost-cap.js';
import { modelAllowListCheck } from './model-allowlist.js';
import { piiCheck } from './pii-rules.js';
import { rateLimitCheck } from './rate-limit.js';
import { retryBlockCheck } from './retry-block.js';

export const CHECKS: readonly Check[] = [modelAllowListCheck, piiCheck, retryBlockCheck, rateLimitCheck, costCapCheck, budgetCheck];
