import { connect, type ConnectionOptions } from '../services/connection.js';
import { say } from '../ui/messages.js';

export async function maintenanceCommand(state: 'on' | 'off', flags: ConnectionOptions & { message?: string }): Promise<number> {
  const enabled = state === 'on';
  await connect(flags).setMaintenance(enabled ? { enabled, message: flags.message ?? null } : { enabled });
  say(enabled ? 'Maintenance on: the gateway answers 503 maintenance; the admin interface keeps working.' : 'Maintenance off: the gateway serves requests again.');
  return 0;
}
