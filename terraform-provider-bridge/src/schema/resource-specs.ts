import { KIND_LIST, type KindDescriptor } from '@agentgw/cli';
import { z } from 'zod';

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

export type ResourceType = KindDescriptor['terraformType'];

/** How one declarative kind (cli/src/kinds) becomes one Terraform resource. */
export interface ResourceSpec {
  type: ResourceType;
  kind: KindDescriptor;
  description: string;
  /** The declarative file's entry: required and optional attributes come from it. */
  input: z.ZodObject;
  /** What the server answers to create: its fields that the input lacks become computed attributes. */
  output: z.ZodObject;
  /** Server fields kept out of the state (timestamps and spend change without a write and would show as drift). */
  hidden: readonly string[];
  sensitive: readonly string[];
  /** Fields the server cannot change in place: a new value destroys and re-creates the object. */
  replaceOn: readonly string[];
  /** Descriptions the kind gives over the contract's, by dotted path. */
  docs: Readonly<Record<string, string>>;
}

function specOf(d: KindDescriptor): ResourceSpec {
  return {
    type: d.terraformType,
    kind: d,
    description: d.description,
    input: d.schemas.declared,
    output: d.schemas.created,
    hidden: d.readOnly.filter((f) => !d.serverFields.includes(f)),
    sensitive: d.secrets,
    replaceOn: d.fields.filter((f) => f.immutable).map((f) => f.name).sort(),
    docs: d.docs,
  };
}

export const RESOURCE_SPECS = Object.fromEntries(KIND_LIST.map((d) => [d.terraformType, specOf(d)])) as Record<ResourceType, ResourceSpec>;

export const RESOURCE_TYPES = Object.keys(RESOURCE_SPECS) as ResourceType[];
