// The checks every data-plane request passes after auth, headers and body validation, in CONTRACT's decision order.
// A stopped trace is refused by the /v1 front before the body is read; it comes first here again for a request whose
// body was still arriving when its trace was stopped.
import type { Check } from './admitting.js';
import { budgetCheck } from './budget.js';
import { costCapCheck } from './cost-cap.js';
import { modelAllowListCheck } from './model-allowlist.js';
import { piiCheck } from './pii-rules.js';
import { rateLimitCheck } from './rate-limit.js';
import { retryBlockCheck } from './retry-block.js';
import { toolAllowListCheck } from './tool-allowlist.js';
import { toolCallCapCheck } from './tool-call-cap.js';
import { toolRulesCheck } from './tool-rules-check.js';
import { traceStopCheck } from './trace-stop.js';

export const CHECKS: readonly Check[] = [traceStopCheck, modelAllowListCheck, piiCheck, retryBlockCheck, rateLimitCheck, costCapCheck, budgetCheck];

/**
 * MCP tool calls (policy view: tool-call-view.ts): the tool allow-list for the model's, then the tool rules (on the
 * arguments as the agent sent them, before PII may redact them), the per-trace call cap for rpm/tpm.
 */
export const TOOL_CHECKS: readonly Check[] = [traceStopCheck, toolAllowListCheck, toolRulesCheck, piiCheck, retryBlockCheck, toolCallCapCheck, costCapCheck, budgetCheck];

/**
 * A later round of one tool call (MCP 2026-07-28 input_required: the same call again, with the client's answers and the
 * state agentgw sealed for it and its arguments): checked as the call was, but not counted again as a repeat or as
 * another call of the trace (it is the same call; the first round was counted).
 */
export const TOOL_ROUND_CHECKS: readonly Check[] = TOOL_CHECKS.filter((c) => c !== retryBlockCheck && c !== toolCallCapCheck);
