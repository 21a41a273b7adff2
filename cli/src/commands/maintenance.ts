import type { Command } from 'commander';
import { act } from '../run-action.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { say } from '../ui/messages.js';

export async function maintenanceCommand(state: 'on' | 'off', flags: ConnectionOptions & { message?: string }): Promise<number> {
  const enabled = state === 'on';
  await connect(flags).setMaintenance(enabled ? { enabled, message: flags.message ?? null } : { enabled });
  say(enabled ? 'Maintenance on: the gateway answers 503 maintenance; the admin interface keeps working.' : 'Maintenance off: the gateway serves requests again.');
  return 0;
}

export function registerMaintenance(program: Command): void {
  const maintenance = program.command('maintenance').description('turn maintenance mode on or off');
  maintenance
    .command('on')
    .description('start maintenance: every /v1 request gets 503 maintenance with Retry-After')
    .option('--message <text>', 'message for callers')
    .action(act((flags: ConnectionOptions & { message?: string }) => maintenanceCommand('on', flags)));
  maintenance.command('off').description('end maintenance: requests are served again').action(act((flags: ConnectionOptions) => maintenanceCommand('off', flags)));
}
