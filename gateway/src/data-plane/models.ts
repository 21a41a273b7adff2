import { effectivePolicy } from '../policy/effective-policy.js';
import { modelAllowed } from '../policy/model-allowlist.js';
import type { DataPlane } from './data-plane.js';
import { type Exchange, sendJson } from './exchange.js';
import type { RequestContext } from './request-context.js';
import type { ListedModel } from './router.js';

/**
 * GET /v1/models: the models and aliases every policy of this request allows, in OpenAI's list format. An alias is
 * listed with the targets a request of it may reach (as admission decides: the target or the alias allowed), and only
 * when there is one; a glob alias is listed as its pattern.
 */
export function models(dp: DataPlane, ex: Exchange): void {
  const created = Math.floor(Date.now() / 1000);
  const data = allowedModels(dp, ex.ctx).map((m) => ({ id: m.id, object: 'model', created, owned_by: m.owned_by, ...(m.targets ? { targets: m.targets } : {}), ...(m.pattern ? { pattern: true } : {}) }));
  sendJson(ex, 200, JSON.stringify({ object: 'list', data }));
}

/** The models and aliases every policy of this request allows (an alias with the targets it may reach). */
export function allowedModels(dp: DataPlane, ctx: RequestContext): ListedModel[] {
  const eff = effectivePolicy(ctx.agent, (id) => dp.snapshot.policy(id), ctx.headerPolicyId);
  const allows = (id: string, alias?: string) => eff.policies.every((p) => modelAllowed(p.allowed_models, id) || (alias !== undefined && modelAllowed(p.allowed_models, alias)));
  const out: ListedModel[] = [];
  for (const m of dp.router.listModels()) {
    if (m.targets === undefined) {
      if (allows(m.id)) out.push(m);
      continue;
    }
    const targets = m.targets.filter((t) => allows(t, m.id));
    if (targets.length > 0) out.push({ ...m, targets });
  }
  return out;
}
