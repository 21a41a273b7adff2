import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentgwError, ErrorBody, PutRoute, Route, RouteAlias, RouteListQuery, normaliseTargets, page } from '../contract/index.js';
import type { Services } from '../services.js';
import { decodeCursor, encodeCursor } from '../storage/kysely-store.js';
import { audited } from './audit-trail.js';
import { requireAdmin } from './principal.js';

// Aliases arrive percent-encoded (`team%2Fsmart`, `claude-*`): the router decodes the parameter before it is read here.
const Params = z.strictObject({ alias: RouteAlias });
const notFound = (alias: string) =>
  new AgentgwError('route_not_found', `Route ${alias} does not exist: check the alias (percent-encoded in the path, "/" as %2F) or PUT it first.`);
const readOnly = (alias: string, verb: string) =>
  new AgentgwError('route_read_only', `Route ${alias} comes from the server config (agentgw.yaml models:): ${verb} it there, or use another alias.`);

export function routeRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

  /** The routes of agentgw.yaml, as the admin interface lists them. */
  const configRoutes = (): Route[] =>
    s.router.configRoutes().map((c) => ({ alias: c.alias, strategy: c.strategy, targets: [...c.targets], labels: {}, source: 'config', created_at: null, updated_at: null }));

  r.put(
    '/routes/:alias',
    { schema: { tags: ['routes'], params: Params, body: PutRoute, response: { 200: Route, 201: Route, ...errors } } },
    async (req, reply) => {
      requireAdmin(req.principal, 'write routes');
      const { alias } = req.params;
      if (s.router.isConfigAlias(alias)) throw readOnly(alias, 'change');
      const providers = new Set(s.providerInfo().map((p) => p.name));
      req.body.targets.forEach((t, i) => {
        const provider = t.model.slice(0, t.model.indexOf('/'));
        if (!providers.has(provider)) {
          throw new AgentgwError(
            'validation_failed',
            `targets[${i}].model ${t.model} names provider ${provider}, which the server config does not have: use one of ${[...providers].join(', ')}.`,
            { param: `targets[${i}].model` },
          );
        }
      });
      const targets = normaliseTargets(req.body.targets);
      const { route, created } = await audited(s, req, async (tx) => {
        const before = (await tx.getRoute(alias)) ?? null;
        const put = await tx.putRoute(alias, { strategy: req.body.strategy, targets, labels: req.body.labels ?? before?.labels ?? {} });
        return [put, { action: put.created ? 'route.create' : 'route.update', object: { kind: 'route', id: alias }, tenant_id: null, before, after: put.route }];
      });
      // Every node routes with it before the answer goes out.
      await s.snapshot.changed();
      return reply.code(created ? 201 : 200).send(route);
    },
  );

  // Routes are global, as global policies: every key may read them (its agents may use them).
  r.get('/routes', { schema: { tags: ['routes'], querystring: RouteListQuery, response: { 200: page(Route), ...errors } } }, async (req) => {
    // A stored route whose alias agentgw.yaml has taken since is not served (the file's wins): it is not listed either.
    const stored = (await s.store.allRoutes()).filter((r) => !s.router.isConfigAlias(r.alias));
    // In code-point order whatever the database's collation, as the cursor compares aliases.
    stored.sort((a, b) => (a.alias < b.alias ? -1 : a.alias > b.alias ? 1 : 0));
    const all = [...configRoutes(), ...stored];
    // The cursor names the last route of the page (source and alias), so a route written between pages moves nothing.
    let start = 0;
    if (req.query.cursor) {
      const [source, alias] = decodeCursor(req.query.cursor);
      const at = all.findIndex((r) => r.source === source && r.alias === alias);
      // Gone since: the stored routes are in alias order, so the page goes on after where it stood.
      start = at >= 0 ? at + 1 : source === 'api' ? all.findIndex((r) => r.source === 'api' && r.alias > alias!) : 0;
      if (start < 0) start = all.length;
    }
    const data = all.slice(start, start + req.query.limit);
    const last = data.at(-1);
    return { data, next_cursor: last && start + data.length < all.length ? encodeCursor([last.source, last.alias]) : null };
  });

  r.get('/routes/:alias', { schema: { tags: ['routes'], params: Params, response: { 200: Route, ...errors } } }, async (req) => {
    const { alias } = req.params;
    const config = configRoutes().find((c) => c.alias === alias);
    if (config) return config;
    const route = await s.store.getRoute(alias);
    if (!route) throw notFound(alias);
    return route;
  });

  // `/routes/team/x`: an alias holding "/" that was not percent-encoded.
  r.route({
    method: ['GET', 'PUT', 'DELETE'],
    url: '/routes/*',
    schema: { hide: true },
    handler: async (req) => {
      const alias = (req.params as { '*': string })['*'];
      throw new AgentgwError('route_not_found', `No route ${req.method} /api/routes/${alias}: percent-encode an alias holding "/", as in /api/routes/${encodeURIComponent(alias)}.`);
    },
  });

  r.delete('/routes/:alias', { schema: { tags: ['routes'], params: Params, response: { 204: z.null(), ...errors } } }, async (req, reply) => {
    requireAdmin(req.principal, 'delete routes');
    const { alias } = req.params;
    if (s.router.isConfigAlias(alias)) throw readOnly(alias, 'remove');
    await audited(s, req, async (tx) => {
      const before = await tx.getRoute(alias);
      if (!before || !(await tx.deleteRoute(alias))) throw notFound(alias);
      return [undefined, { action: 'route.delete', object: { kind: 'route', id: alias }, tenant_id: null, before, after: null }];
    });
    await s.snapshot.changed();
    return reply.code(204).send(null);
  });
}
