import type { Command } from 'commander';
import { KINDS } from '../kinds/index.js';
import type { Tenant } from '../admin-client/types.js';
import { act } from '../run-action.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { say } from '../ui/messages.js';
import { renderDocument } from '../ui/document.js';
import { outputMode } from '../ui/output-mode.js';
import { formatLabels, renderTable } from '../ui/table.js';
import { checkBody } from './flag-values.js';
import { addKindFlags, kindBody, kindFlags } from './kind-flags.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

/** Every field of a tenant but the id (positional) is a flag, read from the contract. */
const CREATE_FLAGS = kindFlags(KINDS.tenant, ['id']);

export async function tenantsList(flags: Flags): Promise<number> {
  const tenants = await connect(flags).listAllTenants();
  renderTable(
    tenants,
    [
      { header: 'ID', value: (t) => t.id },
      { header: 'NAME', value: (t) => t.name },
      { header: 'LABELS', value: (t) => formatLabels(t.labels) },
    ],
    outputMode(flags),
  );
  return 0;
}

export async function tenantsGet(id: string, flags: Flags): Promise<number> {
  renderDocument(await connect(flags).getTenant(id), outputMode(flags));
  return 0;
}

export async function tenantsCreate(id: string, flags: Flags & Record<string, unknown>): Promise<number> {
  const body = checkBody(KINDS.tenant.schemas.create, { id, ...kindBody(flags, CREATE_FLAGS) }, 'tenant');
  const tenant = (await KINDS.tenant.api.create(connect(flags), body as Tenant, id)) as Tenant;
  if (flags.json) renderDocument(tenant, 'json');
  else say(`Created tenant ${tenant.id}.`);
  return 0;
}

export async function tenantsDelete(id: string, flags: Flags): Promise<number> {
  await connect(flags).deleteTenant(id);
  say(`Deleted tenant ${id}.`);
  return 0;
}

export function registerTenants(program: Command): void {
  const tenants = program.command('tenants').description('manage tenants');
  tenants.command('list').description('list the tenants').option('--json', 'print JSON').action(act(tenantsList));
  tenants.command('get <id>').description('show a tenant, with its spend').option('--json', 'print JSON').action(act(tenantsGet));
  addKindFlags(tenants.command('create <id>').description('create a tenant'), CREATE_FLAGS, { requireRequired: true })
    .option('--json', 'print JSON')
    .action(act(tenantsCreate));
  tenants.command('delete <id>').description('delete a tenant (it must have no agents or policies left)').action(act(tenantsDelete));
}
