import type { Command } from 'commander';
import { act } from '../run-action.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { renderDocument } from '../ui/document.js';
import { outputMode } from '../ui/output-mode.js';

/** The server's configuration as the admin interface reports it (never a provider secret). */
export async function configCommand(flags: ConnectionOptions & { json?: boolean }): Promise<number> {
  renderDocument(await connect(flags).getSystemConfig(), outputMode(flags));
  return 0;
}

export function registerConfig(program: Command): void {
  program.command('config').description('show the server configuration').option('--json', 'print JSON').action(act(configCommand));
}
