#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=8 --heap-growing-percent=50
import { Command, Option } from 'commander';
import { ROLES } from '@agentgw/gateway/contract';
import { adminKeysCreate, adminKeysDelete, adminKeysList } from './commands/admin-keys.js';
import { agentsCreate, agentsDelete, agentsGet, agentsList, agentsRotateKey } from './commands/agents.js';
import { applyCommand } from './commands/apply.js';
import { configCommand } from './commands/config.js';
import { destroyCommand } from './commands/destroy.js';
import { exportCommand } from './commands/export.js';
import { collect } from './commands/flag-values.js';
import { maintenanceCommand } from './commands/maintenance.js';
import { planCommand } from './commands/plan.js';
import { policiesDelete, policiesGet, policiesList, policiesPut } from './commands/policies.js';
import { serveCommand } from './commands/serve.js';
import { tenantsCreate, tenantsDelete, tenantsGet, tenantsList } from './commands/tenants.js';
import { tracesList, tracesShow, tracesTail } from './commands/traces.js';
import { usageCommand } from './commands/usage.js';
import { runAction } from './run-action.js';
import type { ConnectionOptions } from './services/connection.js';
import { VERSION } from './version.js';

const program = new Command('agentgw')
  .description('agentgw: a gateway between AI agents and model providers')
  .version(VERSION)
  .option('--admin-url <url>', 'admin interface address (env AGENTGW_ADMIN_URL, default http://127.0.0.1:8080/api)')
  .option('--admin-key <key>', 'admin key (env AGENTGW_ADMIN_KEY)')
  .showHelpAfterError('(run agentgw --help for usage)');

/** Every action gets its own flags merged with the global connection flags. */
// commander hands positionals, then its own options object, then the command
function act(fn: (...args: any[]) => Promise<number>) {
  return (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const positional = args.slice(0, -2);
    return runAction(() => fn(...positional, cmd.optsWithGlobals()));
  };
}

const desiredFlags = (cmd: Command) =>
  cmd
    .option('-f, --file <path>', 'declarative file or directory of *.yaml (repeatable)', collect, [])
    .option('--cdktf <dir>', 'desired state from a CDKTF app directory (@agentgw/cdktf)');

program
  .command('serve')
  .description('run the gateway (admin interface at /api, gateway at /v1)')
  .option('--config <file>', 'agentgw.yaml (env AGENTGW_CONFIG)')
  .option('--port <n>', 'port to listen on (0 = any free port)')
  .option('--host <host>', 'address to listen on')
  .action(act(serveCommand));

desiredFlags(program.command('plan').description('show what apply would change'))
  .option('--prune', 'also plan deleting managed objects the file no longer names')
  .option('--detailed-exitcode', 'exit 0 when nothing changes, 2 when something does, 1 on error')
  .option('--json', 'print the plan as JSON')
  .action(act(planCommand));

desiredFlags(program.command('apply').description('make the gateway match the file'))
  .option('--auto-approve', 'apply without asking')
  .option('--prune', 'delete managed objects (label managed_by: agentgw) the file no longer names')
  .option('--keys-out <file>', 'write new agents\' keys to FILE (mode 0600) instead of printing them')
  .option('--json', 'print the plan and results as JSON')
  .action(act(applyCommand));

desiredFlags(program.command('destroy').description('delete every object the file names'))
  .option('--auto-approve', 'destroy without asking')
  .option('--json', 'print the plan and results as JSON')
  .action(act(destroyCommand));

program
  .command('export')
  .description('print the live state as a declarative file (no keys)')
  .option('--tenant <id>', 'only this tenant, its policies and agents')
  .option('-o, --output <file>', 'write to FILE instead of stdout')
  .action(act(exportCommand));

const tenants = program.command('tenants').description('manage tenants');
tenants.command('list').option('--json', 'print JSON').action(act(tenantsList));
tenants.command('get <id>').option('--json', 'print JSON').action(act(tenantsGet));
tenants
  .command('create <id>')
  .requiredOption('--name <name>', 'display name')
  .option('--label <key=value>', 'label (repeatable)', collect, [])
  .option('--json', 'print JSON')
  .action(act(tenantsCreate));
tenants.command('delete <id>').action(act(tenantsDelete));

const agents = program.command('agents').description('manage agents (ID is agt_... or TENANT/NAME)');
agents.command('list').option('--tenant <id>', 'only this tenant').option('--json', 'print JSON').action(act(agentsList));
agents.command('get <id>').option('--json', 'print JSON').action(act(agentsGet));
agents
  .command('create')
  .requiredOption('--tenant <id>', 'tenant')
  .requiredOption('--name <name>', 'name, unique within the tenant')
  .option('--policy <id>', 'policy')
  .option('--label <key=value>', 'label (repeatable)', collect, [])
  .option('--json', 'print JSON (includes the key)')
  .action(act(agentsCreate));
agents.command('delete <id>').action(act(agentsDelete));
agents.command('rotate-key <id>').description('issue a new key; the old one stops working').option('--json', 'print JSON').action(act(agentsRotateKey));

const policies = program.command('policies').description('manage policies');
policies.command('list').option('--tenant <id>', 'only this tenant').option('--json', 'print JSON').action(act(policiesList));
policies.command('get <id>').option('--json', 'print JSON').action(act(policiesGet));
policies
  .command('create <id>')
  .alias('put')
  .description('create a policy, or change the given fields of an existing one')
  .option('--tenant <id>', 'owner tenant (omit for a global policy)')
  .option('--monthly-budget <usd>', 'USD per agent per month ("none" = unlimited)')
  .option('--daily-budget <usd>', 'USD per agent per day ("none" = monthly / days)')
  .option('--allowed-models <list>', 'comma-separated models or globs ("all", "none")')
  .addOption(new Option('--pii <mode>', 'PII rule').choices(['off', 'redact', 'block']))
  .option('--pii-types <list>', 'comma-separated PII types')
  .option('--retry-block <n/seconds>', 'block a request repeated more than N times in SECONDS ("none")')
  .option('--max-cost-per-request <usd>', 'worst-case cost cap per request ("none")')
  .option('--max-cost-per-trace <usd>', 'spend cap per trace ("none")')
  .option('--rpm <n>', 'requests per minute per agent ("none")')
  .option('--tpm <n>', 'tokens per minute per agent ("none")')
  .option('--label <key=value>', 'label (repeatable)', collect, [])
  .option('--json', 'print JSON')
  .action(act(policiesPut));
policies.command('delete <id>').action(act(policiesDelete));

const traces = program.command('traces').description('what agents did: traces of requests');
traces
  .command('list')
  .description('traces, newest first')
  .option('--tenant <id>', 'only this tenant')
  .option('--agent <id>', 'only this agent (agt_...)')
  .option('--since <time>', 'RFC 3339 time, e.g. 2026-01-31T00:00:00Z')
  .option('--limit <n>', 'how many (1-500, default 50)')
  .option('--cursor <cursor>', 'the next page, as printed after a full page')
  .option('--json', 'print JSON')
  .action(act(tracesList));
traces
  .command('show <trace-id>')
  .alias('get')
  .description('the steps of one trace on a timeline, with totals')
  .option('--json', 'print the trace document')
  .action(act(tracesShow));
traces
  .command('tail')
  .description('print traces as they start or change, until Ctrl-C')
  .option('--tenant <id>', 'only this tenant')
  .option('--agent <id>', 'only this agent (agt_...)')
  .option('--interval <seconds>', 'seconds between polls (default 2)')
  .option('--max-polls <n>', 'stop after N polls (for scripts)')
  .option('--json', 'print one JSON object per line')
  .action(act(tracesTail));

program
  .command('usage')
  .description('requests, tokens and cost, grouped')
  .addOption(new Option('--group-by <key>', 'group rows by').choices(['agent', 'tenant', 'model', 'day']).default('agent'))
  .option('--from <time>', 'RFC 3339 start')
  .option('--to <time>', 'RFC 3339 end (exclusive)')
  .option('--tenant <id>', 'only this tenant')
  .option('--json', 'print JSON')
  .action(act(usageCommand));

const adminKeys = program.command('admin-keys').description('manage admin keys (admin role only)');
adminKeys.command('list').option('--json', 'print JSON').action(act(adminKeysList));
adminKeys
  .command('create')
  .requiredOption('--name <name>', 'what the key is for')
  .addOption(new Option('--role <role>', 'what the key may do').choices([...ROLES]).makeOptionMandatory())
  .option('--tenant <id>', 'scope the key to one tenant (required for tenant_admin)')
  .option('--json', 'print JSON (includes the key)')
  .action(act(adminKeysCreate));
adminKeys.command('delete <id>').description('revoke a key at once').action(act(adminKeysDelete));

program.command('config').description('show the server configuration').option('--json', 'print JSON').action(act(configCommand));

const maintenance = program.command('maintenance').description('turn maintenance mode on or off');
maintenance
  .command('on')
  .option('--message <text>', 'message for callers')
  .action(act((flags: ConnectionOptions & { message?: string }) => maintenanceCommand('on', flags)));
maintenance.command('off').action(act((flags: ConnectionOptions) => maintenanceCommand('off', flags)));

await program.parseAsync();
