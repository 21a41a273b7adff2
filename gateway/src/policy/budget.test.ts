import { describe, expect, test } from 'vitest';
import { MemoryCounters } from '../accounting/counters/memory.js';
import { DEFAULT_RULES, type Policy } from '../contract/index.js';
import { chatPolicyView } from '../data-plane/dialects/chat-completions/chat-policy-view.js';
import type { StoredAgent } from '../storage/store.js';
import type { Admitting } from './admitting.js';
import { budgetCheck } from './budget.js';
import { effectivePolicy } from './effective-policy.js';

const ts = '2026-01-01T00:00:00.000Z';
const policy = (over: Partial<Policy>): Policy => ({
  id: 'p', tenant_id: 'acme', monthly_budget: null, daily_budget: null, allowed_models: null, rules: DEFAULT_RULES, labels: {}, created_at: ts, updated_at: ts, ...over,
});
const agent = { id: 'agt_1', tenant_id: 'acme', policy_id: 'p' } as StoredAgent;

function admitting(p: Policy, usageFull: boolean): Admitting {
  return {
    view: chatPolicyView,
    body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 },
    model: 'openai/gpt-4o-mini',
    eff: effectivePolicy(agent, () => p, undefined),
    targets: [{ id: 'openai/gpt-4o-mini', price: { input: 1, output: 1 } }],
    blockingPolicy: 'p',
    agentId: agent.id,
    traceKey: null,
    repeatScope: 'a:agt_1',
    now: new Date(),
    counters: new MemoryCounters(),
    usageFull,
    piiTypes: [],
    promptUpper: null,
    tpmTokens: 0,
    worst: null,
    clampedMaxTokens: null,
    reservationId: null,
  };
}

describe('the budget check while the usage journal is full', () => {
  test('refuses a budgeted request with 503 store_unavailable and Retry-After (spend it cannot record)', async () => {
    for (const p of [policy({ daily_budget: 5 }), policy({ monthly_budget: 50 }), policy({ rules: { ...DEFAULT_RULES, max_cost_per_trace: 1 } })]) {
      const err = await Promise.resolve(budgetCheck.run(admitting(p, true))).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'store_unavailable', status: 503, headers: { 'retry-after': '5' } });
    }
  });

  test('lets a request no budget applies to through, and a budgeted one once the journal has room', async () => {
    const free = admitting(policy({}), true);
    await budgetCheck.run(free);
    expect(free.reservationId).not.toBeNull();
    const budgeted = admitting(policy({ daily_budget: 5 }), false);
    await budgetCheck.run(budgeted);
    expect(budgeted.reservationId).not.toBeNull();
  });
});
