import { Option, type Command } from 'commander';
import { CreateAdminKey, ROLES, type Role } from '@agentgw/gateway/contract';
import { act } from '../run-action.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { renderDocument } from '../ui/document.js';
import { say } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { renderTable } from '../ui/table.js';
import { checkBody } from './flag-values.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

export async function adminKeysList(flags: Flags): Promise<number> {
  renderTable(
    await connect(flags).listAllAdminKeys(),
    [
      { header: 'ID', value: (k) => k.id },
      { header: 'NAME', value: (k) => k.name },
      { header: 'ROLE', value: (k) => k.role },
      { header: 'TENANT', value: (k) => k.tenant_id ?? '-' },
      { header: 'KEY', value: (k) => `${k.key_prefix}…` },
      { header: 'CREATED', value: (k) => k.created_at },
    ],
    outputMode(flags),
  );
  return 0;
}

export async function adminKeysCreate(flags: Flags & { name: string; role: Role; tenant?: string }): Promise<number> {
  const body = checkBody(CreateAdminKey, { name: flags.name, role: flags.role, tenant_id: flags.tenant }, 'admin key');
  const key = await connect(flags).createAdminKey(body);
  if (flags.json) renderDocument(key, 'json');
  else {
    say(`Created admin key ${key.name} (${key.id}), role ${key.role}${key.tenant_id ? ` for tenant ${key.tenant_id}` : ''}.`);
    say(`Admin key (shown once; store it now): ${key.api_key}`);
  }
  return 0;
}

export async function adminKeysDelete(id: string, flags: Flags): Promise<number> {
  await connect(flags).deleteAdminKey(id);
  say(`Deleted admin key ${id}; it no longer works.`);
  return 0;
}

export function registerAdminKeys(program: Command): void {
  const adminKeys = program.command('admin-keys').description('manage admin keys (admin role only)');
  adminKeys.command('list').description('list the admin keys (names, roles, prefixes; never a key)').option('--json', 'print JSON').action(act(adminKeysList));
  adminKeys
    .command('create')
    .description('create an admin key and print it once (only its hash is stored)')
    .requiredOption('--name <name>', 'what the key is for')
    .addOption(new Option('--role <role>', 'what the key may do').choices([...ROLES]).makeOptionMandatory())
    .option('--tenant <id>', 'scope the key to one tenant (required for tenant_admin)')
    .option('--json', 'print JSON (includes the key)')
    .action(act(adminKeysCreate));
  adminKeys.command('delete <id>').description('revoke a key at once').action(act(adminKeysDelete));
}
