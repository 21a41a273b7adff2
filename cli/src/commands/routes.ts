import type { Command } from 'commander';
import { PutRoute, ROUTE_STRATEGIES, type Route } from '@agentgw/gateway/contract';
import { CliError } from '../errors.js';
import { act } from '../run-action.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { formatValue } from '../ui/format-value.js';
import { say } from '../ui/messages.js';
import { renderDocument } from '../ui/document.js';
import { outputMode } from '../ui/output-mode.js';
import { formatLabels, renderTable } from '../ui/table.js';
import { checkBody, collect, parseLabels } from './flag-values.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

interface PutFlags extends Flags {
  strategy?: string;
  target?: string[];
  targets?: string;
  label?: string[];
}

export async function routesList(flags: Flags): Promise<number> {
  const routes = await connect(flags).listAllRoutes();
  renderTable(
    routes,
    [
      { header: 'ALIAS', value: (r: Route) => r.alias },
      { header: 'STRATEGY', value: (r: Route) => r.strategy },
      { header: 'TARGETS', value: (r: Route) => formatValue('targets', r.targets) },
      { header: 'SOURCE', value: (r: Route) => r.source },
      { header: 'LABELS', value: (r: Route) => formatLabels(r.labels) },
    ],
    outputMode(flags),
  );
  return 0;
}

export async function routesGet(alias: string, flags: Flags): Promise<number> {
  renderDocument(await connect(flags).getRoute(alias), outputMode(flags));
  return 0;
}

/** `--target MODEL` (repeatable) for plain targets, or `--targets JSON` for weights, priorities and quotas. */
function targetsOf(flags: PutFlags): unknown[] {
  if (flags.targets !== undefined && flags.target !== undefined) throw new CliError('give --target or --targets, not both');
  if (flags.targets !== undefined) {
    try {
      const v = JSON.parse(flags.targets) as unknown;
      if (Array.isArray(v)) return v;
    } catch {
      // reported below
    }
    throw new CliError('--targets must be a JSON array such as \'[{"model":"openai/gpt-4o","weight":3},{"model":"anthropic/claude-sonnet-4-5"}]\'');
  }
  if (!flags.target?.length) throw new CliError('name the targets with --target provider/model (repeatable) or --targets JSON');
  return flags.target.map((model) => ({ model }));
}

export async function routesPut(alias: string, flags: PutFlags): Promise<number> {
  const body = checkBody(PutRoute, { strategy: flags.strategy ?? 'fallback', targets: targetsOf(flags), labels: parseLabels(flags.label) }, 'route');
  const { route, created } = await connect(flags).putRoute(alias, body);
  if (flags.json) renderDocument(route, 'json');
  else say(`${created ? 'Created' : 'Updated'} route ${route.alias}: ${route.strategy} over ${formatValue('targets', route.targets)}.`);
  return 0;
}

export async function routesDelete(alias: string, flags: Flags): Promise<number> {
  await connect(flags).deleteRoute(alias);
  say(`Deleted route ${alias}.`);
  return 0;
}

export function registerRoutes(program: Command): void {
  const routes = program.command('routes').description('manage routes: model aliases and their targets (those of agentgw.yaml are read-only)');
  routes.command('list').description('list the routes, those of agentgw.yaml included (source config)').option('--json', 'print JSON').action(act(routesList));
  routes.command('get <alias>').description('show a route').option('--json', 'print JSON').action(act(routesGet));
  routes
    .command('put <alias>')
    .description('create or replace a route (admin keys only); the alias may be a glob such as "team/*"')
    .option('--strategy <strategy>', `${ROUTE_STRATEGIES.join(', ')} (default fallback)`)
    .option('--target <provider/model>', 'a target, in order (repeatable)', collect)
    .option('--targets <json>', 'the targets as JSON, with weight, priority, rpm and tpm')
    .option('--label <key=value>', 'a label (repeatable)', collect)
    .option('--json', 'print JSON')
    .action(act(routesPut));
  routes.command('delete <alias>').description('delete a route').action(act(routesDelete));
}
