import type { Command } from 'commander';
import type { Policy } from '../admin-client/types.js';
import { KINDS } from '../kinds/index.js';
import { act } from '../run-action.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { renderDocument } from '../ui/document.js';
import { say } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { formatLabels, renderTable } from '../ui/table.js';
import { checkBody } from './flag-values.js';
import { addKindFlags, kindBody, kindFlags } from './kind-flags.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

/** One flag per field of a policy (its rules one each), read from the contract: a new field is a new flag. */
const PUT_FLAGS = kindFlags(KINDS.policy, ['id']);

const money = (n: number | null) => (n === null ? '-' : `$${n}`);

export async function policiesList(flags: Flags & { tenant?: string }): Promise<number> {
  const policies = await connect(flags).listAllPolicies({ tenant_id: flags.tenant });
  renderTable(
    policies,
    [
      { header: 'ID', value: (p) => p.id },
      { header: 'TENANT', value: (p) => p.tenant_id ?? '(global)' },
      { header: 'MONTHLY', value: (p) => money(p.monthly_budget) },
      { header: 'DAILY', value: (p) => money(p.daily_budget) },
      { header: 'MODELS', value: (p) => (p.allowed_models === null ? 'all' : p.allowed_models.join(',') || 'none') },
      { header: 'PII', value: (p) => p.rules.pii },
      { header: 'LABELS', value: (p) => formatLabels(p.labels) },
    ],
    outputMode(flags),
  );
  return 0;
}

export async function policiesGet(id: string, flags: Flags): Promise<number> {
  renderDocument(await connect(flags).getPolicy(id), outputMode(flags));
  return 0;
}

/** PUT: creates the policy, or changes only the fields given when it exists. */
export async function policiesPut(id: string, flags: Flags & Record<string, unknown>): Promise<number> {
  const body = checkBody(KINDS.policy.schemas.create, kindBody(flags, PUT_FLAGS), 'policy');
  const { policy, created } = await connect(flags).putPolicy(id, body as Policy);
  if (flags.json) renderDocument(policy, 'json');
  else say(`${created ? 'Created' : 'Updated'} policy ${policy.id}.`);
  return 0;
}

export async function policiesDelete(id: string, flags: Flags): Promise<number> {
  await connect(flags).deletePolicy(id);
  say(`Deleted policy ${id}.`);
  return 0;
}

export function registerPolicies(program: Command): void {
  const policies = program.command('policies').description('manage policies');
  policies.command('list').description('list the policies').option('--tenant <id>', 'only this tenant').option('--json', 'print JSON').action(act(policiesList));
  policies.command('get <id>').description('show a policy and its rules').option('--json', 'print JSON').action(act(policiesGet));
  addKindFlags(
    policies.command('create <id>').alias('put').description('create a policy, or change the given fields of an existing one'),
    PUT_FLAGS,
    { requireRequired: false },
  )
    .option('--json', 'print JSON')
    .action(act(policiesPut));
  policies.command('delete <id>').description('delete a policy no agent uses').action(act(policiesDelete));
}
