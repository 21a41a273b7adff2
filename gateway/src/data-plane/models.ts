import { effectivePolicy } from '../policy/effective-policy.js';
import { modelAllowed } from '../policy/model-allowlist.js';
import type { DataPlane } from './data-plane.js';
import { type Exchange, sendJson } from './exchange.js';

/**
 * GET /v1/models: the models and aliases every policy of this request allows, in OpenAI's list format. An alias is
 * listed with the targets a request of it may reach (as admission decides: the target or the alias allowed), and only
 * when there is one; a glob alias is listed as its pattern.
 */
export function models(dp: DataPlane, ex: Exchange): void {
  const { ctx } = ex;
  const eff = effectivePolicy(ctx.agent, (id) => dp.snapshot.policy(id), ctx.headerPolicyId);
  const created = Math.floor(Date.now() / 1000);
  const allows = (id: string, alias?: string) => eff.policies.every((p) => modelAllowed(p.allowed_models, id) || (alias !== undefined && modelAllowed(p.allowed_models, alias)));
  const data = [];
  for (const m of dp.router.listModels()) {
    if (m.targets === undefined) {
      if (allows(m.id)) data.push({ id: m.id, object: 'model', created, owned_by: m.owned_by });
      continue;
    }
    const targets = m.targets.filter((t) => allows(t, m.id));
    if (targets.length > 0) data.push({ id: m.id, object: 'model', created, owned_by: m.owned_by, targets, ...(m.pattern ? { pattern: true } : {}) });
  }
  sendJson(ex, 200, JSON.stringify({ object: 'list', data }));
}
