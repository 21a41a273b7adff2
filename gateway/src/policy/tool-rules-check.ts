// Tool rules on /mcp (CONTRACT: "Tool rules and approvals"): a tools/call is decided as a model's proposed call is, by
// the same module, with the tool named `server/tool`; a deny refuses it with tool_denied and the refusal sentence. An
// `approve` is left on the admission: the call is held for a person once every check has passed (mcp/tool-call.ts).
import { AgentgwError } from '../contract/index.js';
import type { Check } from './admitting.js';
import { proposedToolCall, refusalSentence, toolRulesOf } from './tool-rules.js';

export const toolRulesCheck: Check = {
  name: 'tool_rules',
  run(a) {
    const rules = toolRulesOf(a.eff);
    if (rules === null) return;
    // The tool-call view's arguments are the JSON text of what the agent sent (`a.model` is `server/tool`).
    const d = rules.decide(proposedToolCall(a.model, a.body.arguments as string));
    a.toolDecision = d;
    if (d.action === 'deny') throw new AgentgwError('tool_denied', refusalSentence(a.model, d));
  },
};
