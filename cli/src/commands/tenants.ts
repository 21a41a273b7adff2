import { CreateTenant } from '@agentgw/gateway/contract';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { say } from '../ui/messages.js';
import { renderDocument } from '../ui/document.js';
import { outputMode } from '../ui/output-mode.js';
import { formatLabels, renderTable } from '../ui/table.js';
import { checkBody, parseLabels } from './flag-values.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

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

export async function tenantsCreate(id: string, flags: Flags & { name: string; label?: string[] }): Promise<number> {
  const body = checkBody(CreateTenant, { id, name: flags.name, labels: parseLabels(flags.label) }, 'tenant');
  const tenant = await connect(flags).createTenant(body);
  if (flags.json) renderDocument(tenant, 'json');
  else say(`Created tenant ${tenant.id}.`);
  return 0;
}

export async function tenantsDelete(id: string, flags: Flags): Promise<number> {
  await connect(flags).deleteTenant(id);
  say(`Deleted tenant ${id}.`);
  return 0;
}
