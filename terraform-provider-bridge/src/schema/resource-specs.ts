import { z } from 'zod';
import {
  AgentWithKey,
  CreateAgent,
  CreateTenant,
  DeclaredPolicy,
  PatchAgent,
  PatchTenant,
  Policy,
  Tenant,
} from '@agentgw/gateway/contract';

/** Where terraform finds this provider (the key of `dev_overrides` and of `required_providers`). */
export const PROVIDER_ADDRESS = 'registry.terraform.io/agentgw/agentgw';
export const PROVIDER_NAME = 'agentgw';

export const ADMIN_URL_ENV = 'AGENTGW_ADMIN_URL';
export const ADMIN_KEY_ENV = 'AGENTGW_ADMIN_KEY';

/** The provider block: not part of the admin API, so it is declared here. */
export const ProviderConfig = z.strictObject({
  admin_url: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL such as http://127.0.0.1:8080/api' })
    .optional()
    .describe(`Base URL of the admin interface, e.g. http://127.0.0.1:8080/api. Defaults to the ${ADMIN_URL_ENV} environment variable.`),
  admin_key: z
    .string()
    .min(1)
    .optional()
    .describe(`Admin API key. Defaults to the ${ADMIN_KEY_ENV} environment variable.`),
});
export type ProviderConfig = z.infer<typeof ProviderConfig>;

export type ResourceType = 'agentgw_tenant' | 'agentgw_policy' | 'agentgw_agent';

/** How one admin-API resource becomes one Terraform resource. */
export interface ResourceSpec {
  type: ResourceType;
  description: string;
  /** The create body: required and optional attributes come from it. */
  input: z.ZodObject;
  /** What the server answers: its fields that the input lacks become computed attributes. */
  output: z.ZodObject;
  /** Server fields kept out of the state (timestamps change on every write and would show as drift). */
  hidden: readonly string[];
  sensitive: readonly string[];
  /** Fields the server cannot change in place: a new value destroys and re-creates the object. */
  replaceOn: readonly string[];
  /** Descriptions for fields the contract leaves undocumented or documents too generally. */
  docs: Record<string, string>;
}

/** Keys of the create body that the update body lacks: the server cannot change them. */
function immutableKeys(create: z.ZodObject, update: z.ZodObject): string[] {
  return Object.keys(create.shape).filter((k) => !(k in update.shape));
}

const LABELS_DOC = 'Free labels (string -> string).';

export const RESOURCE_SPECS: Record<ResourceType, ResourceSpec> = {
  agentgw_tenant: {
    type: 'agentgw_tenant',
    description: 'A tenant of the agentgw gateway: the owner of agents and policies.',
    input: CreateTenant,
    output: Tenant,
    hidden: ['created_at', 'updated_at'],
    sensitive: [],
    replaceOn: immutableKeys(CreateTenant, PatchTenant),
    docs: {
      id: 'Tenant id: lowercase letters, digits, "_" or "-", starting with a letter or digit, at most 64 characters.',
      name: 'Display name, 1-200 characters.',
      labels: LABELS_DOC,
    },
  },
  agentgw_policy: {
    type: 'agentgw_policy',
    description: 'A policy: budgets, allowed models and request rules applied to the agents that use it.',
    input: DeclaredPolicy,
    output: Policy,
    hidden: ['created_at', 'updated_at'],
    sensitive: [],
    // The contract makes the owner tenant immutable after create, although PUT accepts the field.
    replaceOn: ['id', 'tenant_id'],
    docs: {
      id: 'Policy id: lowercase letters, digits, "_" or "-", starting with a letter or digit, at most 64 characters.',
      tenant_id: 'Owner tenant; unset for a global policy (only an admin key may write one). Changing it replaces the policy.',
      monthly_budget: 'USD per agent per calendar month (UTC); unset = unlimited.',
      daily_budget: 'USD per agent per UTC day; unset with a monthly budget = monthly budget / days in the month.',
      allowed_models: 'Model ids or globs ("openai/*", "anthropic/claude-*"); unset = all models, [] = none.',
      rules: 'Request rules; unset fields take their defaults.',
      'rules.pii': 'PII scan of request text: "off" (default), "redact" or "block".',
      'rules.pii_types': 'PII types to detect: email, phone, credit_card, ssn, iban, ip_address, secret (default all).',
      'rules.pii_scope':
        'Parts of a request PII rules read: user (user messages and tool results), assistant, system, tools (tool schemas); default ["user"].',
      'rules.retry_block':
        'Blocks the same request sent more than max_repeats times within window_seconds in one trace; unset = off.',
      'rules.retry_block.max_repeats': 'Repeats allowed within the window, 1-10000.',
      'rules.retry_block.window_seconds': 'Window length in seconds, 1-86400.',
      'rules.max_cost_per_request': 'USD cap on the worst-case cost of one request; unset = none.',
      'rules.max_cost_per_trace': 'USD cap on the spend of one trace; unset = none.',
      'rules.rpm': 'Requests per minute per agent; unset = unlimited.',
      'rules.tpm': 'Tokens per minute per agent; unset = unlimited.',
      'rules.clamp_output':
        'Lower the output limit of a request whose worst case passes the per-request cap or what is left of a budget, instead of refusing it (never below 256 tokens; default false).',
      labels: LABELS_DOC,
    },
  },
  agentgw_agent: {
    type: 'agentgw_agent',
    description: 'An agent: the holder of one gateway API key, bound to a tenant and optionally a policy.',
    input: CreateAgent,
    output: AgentWithKey,
    hidden: ['created_at', 'updated_at'],
    sensitive: ['api_key'],
    replaceOn: immutableKeys(CreateAgent, PatchAgent),
    docs: {
      id: 'Agent id, assigned by the server.',
      name: 'Agent name, unique within its tenant: letters, digits, "_", "." or "-", at most 64 characters.',
      tenant_id: 'The tenant the agent belongs to. Changing it replaces the agent (and its key).',
      policy_id: 'The policy applied to the agent; unset = none.',
      labels: LABELS_DOC,
      key_prefix: 'The first characters of the API key, to recognise it; never the key.',
      api_key: 'The agent API key: known only after create (an imported agent has none).',
    },
  },
};

export const RESOURCE_TYPES = Object.keys(RESOURCE_SPECS) as ResourceType[];
