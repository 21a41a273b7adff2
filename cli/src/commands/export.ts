import type { Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import { CliError } from '../errors.js';
import { dumpLive } from '../reconcile/dump/dump.js';
import { exportDeclarative } from '../reconcile/export/export-state.js';
import { act } from '../run-action.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { declarativeYaml } from '../ui/declarative-yaml.js';
import { note } from '../ui/messages.js';

export interface ExportFlags extends ConnectionOptions {
  tenant?: string;
  output?: string;
}

/** Live state as a declarative file (no keys); applying it back plans no changes. */
export async function exportCommand(flags: ExportFlags): Promise<number> {
  const client = connect(flags);
  const live = await dumpLive(client, { tenantId: flags.tenant });
  if (flags.tenant && live.tenants.length === 0) throw new CliError(`tenant ${flags.tenant} does not exist (or this admin key cannot see it)`);
  const text = declarativeYaml(exportDeclarative(live), client.baseUrl);
  if (!flags.output) {
    process.stdout.write(text);
    return 0;
  }
  try {
    await writeFile(flags.output, text);
  } catch (e) {
    throw new CliError(`cannot write ${flags.output}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  note(`Wrote ${flags.output}.`);
  return 0;
}

export function registerExport(program: Command): void {
  program
    .command('export')
    .description('print the live state as a declarative file: tenants, policies, agents and routes (no keys; the routes of agentgw.yaml stay there)')
    .option('--tenant <id>', 'only this tenant, its policies and agents (routes are global: left out)')
    .option('-o, --output <file>', 'write to FILE instead of stdout')
    .action(act(exportCommand));
}
