import { z } from 'zod';
import { Labels, PaginationQuery, Timestamp } from './common.js';

export const ROUTE_STRATEGIES = ['fallback', 'weighted', 'least_busy', 'latency'] as const;
export const RouteStrategy = z
  .enum(ROUTE_STRATEGIES)
  .describe('How a request picks among the targets: fallback (in order), weighted, least_busy or latency.');
export type RouteStrategy = z.infer<typeof RouteStrategy>;

/** An alias clients name as their model: an id or a glob (`claude-*`, `team/*`), so it may hold `/`. */
export const RouteAlias = z
  .string()
  .regex(/^[A-Za-z0-9*?._:\/@-]{1,200}$/, { message: 'must be a model name or glob such as "smart" or "claude-*" (letters, digits, . _ : / @ - * ?; at most 200)' })
  .describe('The name clients send as their model; `*` and `?` make it a glob (`claude-*`).');

const TargetModel = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}\/[^\s]{1,200}$/, { message: 'must be "provider/model" with a configured provider, such as "openai/gpt-4o-mini"' })
  .describe('`provider/model`: a provider of the server config and its model id.');

const Quota = z.int().min(1).max(1e12);

/** One target as written: weight, priority and the deployment's own quota are optional. */
export const RouteTargetInput = z.strictObject({
  model: TargetModel,
  weight: z.number().positive().max(1_000_000).default(1).describe('Share of traffic under the weighted strategy (default 1).'),
  priority: z.int().min(0).max(1000).default(0).describe('Lower groups are tried first; a higher one only when every target before is unavailable (default 0).'),
  rpm: Quota.nullable().optional().describe("The deployment's own requests per minute (per node); unset = none."),
  tpm: Quota.nullable().optional().describe("The deployment's own tokens per minute (per node); unset = none."),
});
export type RouteTargetInput = z.input<typeof RouteTargetInput>;

export const RouteTarget = z
  .object({
    model: TargetModel,
    weight: z.number(),
    priority: z.number(),
    rpm: z.number().nullable(),
    tpm: z.number().nullable(),
  })
  .meta({ id: 'RouteTarget' });
export type RouteTarget = z.infer<typeof RouteTarget>;

export const ROUTE_SOURCES = ['config', 'api'] as const;

export const Route = z
  .object({
    alias: RouteAlias,
    strategy: RouteStrategy,
    targets: z.array(RouteTarget),
    labels: Labels,
    source: z.enum(ROUTE_SOURCES).describe('config: from agentgw.yaml `models:` (read-only); api: written through the admin interface.'),
    created_at: Timestamp.nullable(),
    updated_at: Timestamp.nullable(),
  })
  .meta({ id: 'Route' });
export type Route = z.infer<typeof Route>;

/** PUT /routes/{alias}: strategy and targets replace what is stored; labels left out keep their value. */
export const PutRoute = z.strictObject({
  strategy: RouteStrategy,
  targets: z.array(RouteTargetInput).min(1, { message: 'must name at least one target' }).max(50, { message: 'at most 50 targets' }),
  labels: Labels.optional(),
});
export type PutRoute = z.input<typeof PutRoute>;

export const RouteListQuery = PaginationQuery;

/** Targets with their defaults filled in, as the server stores and answers them. */
export function normaliseTargets(targets: ReadonlyArray<z.output<typeof RouteTargetInput> | RouteTargetInput>): RouteTarget[] {
  return targets.map((t) => ({ model: t.model, weight: t.weight ?? 1, priority: t.priority ?? 0, rpm: t.rpm ?? null, tpm: t.tpm ?? null }));
}
