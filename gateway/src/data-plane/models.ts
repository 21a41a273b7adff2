import { effectivePolicy } from '../policy/effective-policy.js';
import { modelAllowed } from '../policy/model-allowlist.js';
import type { DataPlane } from './data-plane.js';
import { type Exchange, sendJson } from './exchange.js';

/** GET /v1/models: the models and aliases every policy of this request allows, in OpenAI's list format. */
export function models(dp: DataPlane, ex: Exchange): void {
  const { ctx } = ex;
  const eff = effectivePolicy(ctx.agent, (id) => dp.snapshot.policy(id), ctx.headerPolicyId);
  const created = Math.floor(Date.now() / 1000);
  const data = dp.router
    .listModels()
    .filter((m) => eff.policies.every((p) => modelAllowed(p.allowed_models, m.id)))
    .map((m) => ({ id: m.id, object: 'model', created, owned_by: m.owned_by }));
  sendJson(ex, 200, JSON.stringify({ object: 'list', data }));
}
