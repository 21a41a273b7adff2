import { mergePolicy, Policy, PutPolicy } from '@agentgw/gateway/contract';
import { defineKind } from './define-kind.js';
import { LABELS_DOC } from './docs.js';

/** Policies: named by `id`; created and changed with one PUT. */
export const policyKind = defineKind({
  kind: 'policy',
  section: 'policies',
  description: 'A policy: budgets, allowed models and request rules applied to the agents that use it.',
  entity: Policy,
  create: PutPolicy,
  update: PutPolicy,
  identity: ['id'],
  // PUT accepts tenant_id, but the contract makes a policy's owner immutable after create.
  immutable: ['tenant_id'],
  references: { tenant_id: 'tenant' },
  // the contract's own defaults: what a PUT of an empty body stores
  defaults: mergePolicy(null, {}),
  docs: {
    id: 'Policy id: lowercase letters, digits, "_" or "-", starting with a letter or digit, at most 64 characters.',
    tenant_id: 'Owner tenant; unset for a global policy (only an admin key may write one). Changing it replaces the policy.',
    monthly_budget: 'USD per agent per calendar month (UTC); unset = unlimited.',
    daily_budget: 'USD per agent per UTC day; unset with a monthly budget = monthly budget / days in the month.',
    allowed_models: 'Model ids or globs ("openai/*", "anthropic/claude-*"); unset = all models, [] = none.',
    rules: 'Request rules; unset fields take their defaults.',
    'rules.pii': 'PII scan of request text: "off" (default), "redact" or "block".',
    'rules.pii_types': 'PII types to detect: email, phone, credit_card, ssn, iban, ip_address, secret (default all).',
    'rules.pii_scope':
      'Parts of a request PII rules read: user (user messages and tool results), assistant, system, tools (tool schemas); default ["user"].',
    'rules.retry_block': 'Blocks the same request sent more than max_repeats times within window_seconds in one trace; unset = off.',
    'rules.retry_block.max_repeats': 'Repeats allowed within the window, 1-10000.',
    'rules.retry_block.window_seconds': 'Window length in seconds, 1-86400.',
    'rules.max_cost_per_request': 'USD cap on the worst-case cost of one request; unset = none.',
    'rules.max_cost_per_trace': 'USD cap on the spend of one trace; unset = none.',
    'rules.rpm': 'Requests per minute per agent; unset = unlimited.',
    'rules.tpm': 'Tokens per minute per agent; unset = unlimited.',
    'rules.clamp_output':
      'Lower the output limit of a request whose worst case passes the per-request cap or what is left of a budget, instead of refusing it (never below 256 tokens; default false).',
    tool_rules:
      'Rules deciding the tool calls a model proposes and the calls on /mcp, in order: the first whose tools glob names the call and whose when matches it decides (allow, deny or approve); no match allows. Unset = no rules.',
    labels: LABELS_DOC,
  },
  adminOnly: (policy) => policy.tenant_id === null || policy.tenant_id === undefined,
  api: {
    list: (c, q) => c.listAllPolicies(q),
    get: (c, id) => c.getPolicy(id),
    create: async (c, body, id) => (await c.putPolicy(id, body as PutPolicy)).policy,
    update: async (c, id, patch) => (await c.putPolicy(id, patch as PutPolicy)).policy,
    delete: (c, id) => c.deletePolicy(id),
  },
});
