import { PutRoute, Route } from '@agentgw/gateway/contract';
import { defineKind } from './define-kind.js';
import { LABELS_DOC } from './docs.js';

/** Routes: model aliases named by `alias`; created and replaced with one PUT. Aliases of agentgw.yaml are read-only. */
export const routeKind = defineKind({
  kind: 'route',
  section: 'routes',
  description: 'A route: a model alias (or glob of them) that clients name, and the provider/model targets it sends requests to.',
  entity: Route,
  create: PutRoute,
  update: PutRoute,
  identity: ['alias'],
  docs: {
    alias: 'The model name clients send ("smart", "team/coder"); "*" and "?" make it a glob ("claude-*"). Aliases of the server config cannot be written.',
    strategy: 'How a request picks among the targets: fallback (in order), weighted, least_busy or latency.',
    targets: 'Where requests go, as "provider/model" with an optional weight, priority and the deployment\'s own rpm and tpm.',
    'targets.model': '"provider/model": a provider of the server config and its model id.',
    labels: LABELS_DOC,
  },
  readOnlyReason: (route) => (route.source === 'config' ? 'comes from the server config (agentgw.yaml models:) and cannot be written through the admin interface' : null),
  adminOnly: () => true,
  api: {
    list: (c) => c.listAllRoutes() as unknown as Promise<Route[]>,
    get: (c, alias) => c.getRoute(alias),
    create: async (c, body, alias) => (await c.putRoute(alias, body as PutRoute)).route,
    // PUT replaces strategy and targets together: a change of one sends the other as it stands.
    update: async (c, alias, patch) => {
      const live = await c.getRoute(alias);
      const body = { strategy: live.strategy, targets: live.targets, ...patch } as PutRoute;
      return (await c.putRoute(alias, body)).route;
    },
    delete: (c, alias) => c.deleteRoute(alias),
  },
});
