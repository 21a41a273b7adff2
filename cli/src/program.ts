import { Command } from 'commander';
import { registerAdminKeys } from './commands/admin-keys.js';
import { registerAgents } from './commands/agents.js';
import { registerApply } from './commands/apply.js';
import { registerApprovals } from './commands/approvals.js';
import { registerAudit } from './commands/audit.js';
import { registerConfig } from './commands/config.js';
import { registerDestroy } from './commands/destroy.js';
import { registerExport } from './commands/export.js';
import { registerMaintenance } from './commands/maintenance.js';
import { registerMcp } from './commands/mcp.js';
import { registerPlan } from './commands/plan.js';
import { registerPolicies } from './commands/policies.js';
import { registerRoutes } from './commands/routes.js';
import { declareServe, serveCommand } from './commands/serve.js';
import { registerTenants } from './commands/tenants.js';
import { registerTraces } from './commands/traces.js';
import { registerUsage } from './commands/usage.js';
import { act } from './run-action.js';
import { VERSION } from './version.js';

/** Help is wrapped to this many columns whatever the terminal's width, so it reads the same in a pipe or a log. */
export const HELP_WIDTH = 100;
/** Commander fills lines up to its width: one less keeps every line under HELP_WIDTH. */
const WRAP_AT = HELP_WIDTH - 1;

/** The whole command tree; bin.ts parses argv with it, the help test walks it. Each command file declares its own flags. */
export function buildProgram(): Command {
  const program = new Command('agentgw')
    .description('agentgw: a gateway between AI agents and model providers')
    .version(VERSION)
    .option('--admin-url <url>', 'admin interface address (env AGENTGW_ADMIN_URL, default http://127.0.0.1:8080/api)')
    .option('--admin-key <key>', 'admin key (env AGENTGW_ADMIN_KEY)')
    .configureHelp({ helpWidth: WRAP_AT })
    .showHelpAfterError('(run agentgw --help for usage)');

  declareServe(program.command('serve')).action(act(serveCommand));
  for (const register of [
    registerPlan,
    registerApply,
    registerDestroy,
    registerExport,
    registerTenants,
    registerAgents,
    registerPolicies,
    registerRoutes,
    registerTraces,
    registerUsage,
    registerAdminKeys,
    registerConfig,
    registerMaintenance,
    registerMcp,
    registerAudit,
    registerApprovals,
  ]) {
    register(program);
  }
  return program;
}
