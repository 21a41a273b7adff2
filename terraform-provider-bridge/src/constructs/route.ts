import type { Construct } from 'constructs';
import { KINDS } from '@agentgw/cli';
import type { DeclaredRoute } from '@agentgw/gateway/contract';
import type { z } from 'zod';
import * as gen from '../gen/index.js';
import { validateKind, type ContractProps } from './contract-validation.js';

/** A route as written in a stack: the generated config (its docs) with the contract's types (as written: defaults optional). */
export type RouteProps = gen.route.RouteConfig & ContractProps<z.input<typeof DeclaredRoute>>;
/** One target of a route: `provider/model` with its optional weight, priority, rpm and tpm. */
export type RouteTargetProps = RouteProps['targets'][number];

/**
 * A route: a model alias (or glob) clients name, and the targets it sends requests to (`agentgw_route`).
 * Aliases of the server's agentgw.yaml are read-only and cannot be managed here.
 *
 * @example
 * new Route(this, 'smart', {
 *   alias: 'smart',
 *   strategy: 'fallback',
 *   targets: [{ model: 'openai/gpt-4o' }, { model: 'anthropic/claude-sonnet-4-5', priority: 1 }],
 * });
 */
export class Route extends gen.route.Route {
  public constructor(scope: Construct, id: string, props: RouteProps) {
    super(scope, id, props);
    validateKind(this, KINDS.route, props);
  }
}
