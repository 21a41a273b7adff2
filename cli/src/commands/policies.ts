import { PutPolicy, type RulesInput } from '@agentgw/gateway/contract';
import { CliError } from '../errors.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { renderDocument } from '../ui/document.js';
import { say } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { formatLabels, renderTable } from '../ui/table.js';
import { checkBody, parseLabels, parseList, parseNullableNumber } from './flag-values.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

export interface PolicyFlags extends Flags {
  tenant?: string;
  monthlyBudget?: string;
  dailyBudget?: string;
  allowedModels?: string;
  pii?: string;
  piiTypes?: string;
  retryBlock?: string;
  maxCostPerRequest?: string;
  maxCostPerTrace?: string;
  rpm?: string;
  tpm?: string;
  label?: string[];
}

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

/** `--retry-block 3/300` = at most 3 repeats in 300 seconds; "none" clears it. */
function parseRetryBlock(value: string | undefined): RulesInput['retry_block'] {
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  const m = /^(\d+)\/(\d+)$/.exec(value);
  if (!m) throw new CliError(`--retry-block must be MAX_REPEATS/WINDOW_SECONDS such as 3/300, or "none"`);
  return { max_repeats: Number(m[1]), window_seconds: Number(m[2]) };
}

function policyBody(flags: PolicyFlags): PutPolicy {
  const rules: Record<string, unknown> = {
    pii: flags.pii,
    pii_types: parseList(flags.piiTypes),
    retry_block: parseRetryBlock(flags.retryBlock),
    max_cost_per_request: parseNullableNumber('--max-cost-per-request', flags.maxCostPerRequest),
    max_cost_per_trace: parseNullableNumber('--max-cost-per-trace', flags.maxCostPerTrace),
    rpm: parseNullableNumber('--rpm', flags.rpm),
    tpm: parseNullableNumber('--tpm', flags.tpm),
  };
  const setRules = Object.fromEntries(Object.entries(rules).filter(([, v]) => v !== undefined));
  const body = {
    tenant_id: flags.tenant,
    monthly_budget: parseNullableNumber('--monthly-budget', flags.monthlyBudget),
    daily_budget: parseNullableNumber('--daily-budget', flags.dailyBudget),
    allowed_models: flags.allowedModels === 'all' ? null : parseList(flags.allowedModels),
    rules: Object.keys(setRules).length > 0 ? setRules : undefined,
    labels: parseLabels(flags.label),
  };
  return checkBody(PutPolicy, Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)), 'policy');
}

/** PUT: creates the policy, or changes only the fields given when it exists. */
export async function policiesPut(id: string, flags: PolicyFlags): Promise<number> {
  const { policy, created } = await connect(flags).putPolicy(id, policyBody(flags));
  if (flags.json) renderDocument(policy, 'json');
  else say(`${created ? 'Created' : 'Updated'} policy ${policy.id}.`);
  return 0;
}

export async function policiesDelete(id: string, flags: Flags): Promise<number> {
  await connect(flags).deletePolicy(id);
  say(`Deleted policy ${id}.`);
  return 0;
}
