import { isAdminApiError, type AdminClient } from '@agentgw/cli';
import { ADMIN_KEY_ENV, ProviderConfig, RESOURCE_SPECS, RESOURCE_TYPES, type ResourceType } from '../schema/resource-specs.js';
import type { TfAttribute } from '../schema/terraform-schema-types.js';
import { connectAdmin } from './admin-connection.js';
import { conformObject } from './conform.js';
import { diagnosticFromError, errorDiagnostic, type Diagnostic } from './diagnostics.js';
import { decodeDynamicValue, encodeDynamicValue, type DynamicValue, type TfObject } from './dynamic-value.js';
import { planChange } from './plan.js';
import { providerSchema } from './provider-schema-file.js';
import { ReferenceCheck } from './references.js';
import { RESOURCE_HANDLERS } from './resources/index.js';
import { schemaMessage } from './schema-to-proto.js';
import { validateConfig } from './validate-config.js';

type Request = Record<string, any>;
type Response = Record<string, unknown>;

/** The schema version of every resource type; UpgradeResourceState migrates older states to it. */
const RESOURCE_SCHEMA_VERSION = 0;

const SERVER_CAPABILITIES = { plan_destroy: false, get_provider_schema_optional: true, move_resource_state: false };

function isResourceType(name: string): name is ResourceType {
  return (RESOURCE_TYPES as string[]).includes(name);
}

function attributesOf(type: ResourceType): Record<string, TfAttribute> {
  return providerSchema().resource_schemas[type].block.attributes;
}

function decodeObject(dv: DynamicValue | null | undefined, attributes: Record<string, TfAttribute>): TfObject | null {
  return conformObject(decodeDynamicValue(dv), attributes);
}

function encodeObject(value: TfObject | null, attributes: Record<string, TfAttribute>) {
  return encodeDynamicValue(conformObject(value, attributes));
}

function unknownType(typeName: string): Diagnostic {
  return errorDiagnostic('Unknown resource type', `This provider has no resource type "${typeName}"; it has ${RESOURCE_TYPES.join(', ')}.`);
}

const NOT_CONFIGURED = errorDiagnostic(
  'Provider not configured',
  'The agentgw provider was used before ConfigureProvider: check the provider block.',
);

/** A wrong key (or an unreachable gateway) as one diagnostic, or null when the admin interface accepts the key. */
async function verifyAdminKey(client: AdminClient): Promise<Diagnostic | null> {
  try {
    await client.listTenants({ limit: 1 });
    return null;
  } catch (e) {
    if (isAdminApiError(e) && e.status === 401) {
      return errorDiagnostic(
        'Admin key refused',
        `The agentgw admin interface at ${client.baseUrl} refused the admin key (401 ${e.code}): check admin_key in the provider block or ${ADMIN_KEY_ENV}.`,
      );
    }
    if (isAdminApiError(e) && e.status === 403) return null;
    return diagnosticFromError('Configuring the agentgw provider', e);
  }
}

/** The tfplugin6.Provider RPCs, as plain async functions from request message to response message. */
export class ProviderService {
  private client?: AdminClient;
  private stopping = false;
  private readonly references = new ReferenceCheck();

  public GetMetadata(): Response {
    return {
      server_capabilities: SERVER_CAPABILITIES,
      diagnostics: [],
      data_sources: [],
      resources: RESOURCE_TYPES.map((type_name) => ({ type_name })),
    };
  }

  public GetProviderSchema(): Response {
    const schema = providerSchema();
    return {
      provider: schemaMessage(schema.provider),
      resource_schemas: Object.fromEntries(RESOURCE_TYPES.map((t) => [t, schemaMessage(schema.resource_schemas[t])])),
      data_source_schemas: {},
      functions: {},
      diagnostics: [],
      server_capabilities: SERVER_CAPABILITIES,
    };
  }

  public GetResourceIdentitySchemas(): Response {
    return { identity_schemas: {}, diagnostics: [] };
  }

  public GetFunctions(): Response {
    return { functions: {}, diagnostics: [] };
  }

  public ValidateProviderConfig(req: Request): Response {
    const config = decodeObject(req.config, providerSchema().provider.block.attributes);
    return { diagnostics: validateConfig(ProviderConfig, config) };
  }

  public ValidateResourceConfig(req: Request): Response {
    if (!isResourceType(req.type_name)) return { diagnostics: [unknownType(req.type_name)] };
    const config = decodeObject(req.config, attributesOf(req.type_name));
    return { diagnostics: validateConfig(RESOURCE_SPECS[req.type_name].input, config) };
  }

  public ValidateDataResourceConfig(req: Request): Response {
    return { diagnostics: [errorDiagnostic('Unknown data source', `This provider has no data sources ("${req.type_name}").`)] };
  }

  public ReadDataSource(req: Request): Response {
    return { diagnostics: [errorDiagnostic('Unknown data source', `This provider has no data sources ("${req.type_name}").`)] };
  }

  /** Connects and checks the admin key at once, so that a wrong key fails plan rather than apply. */
  public async ConfigureProvider(req: Request): Promise<Response> {
    const config = decodeObject(req.config, providerSchema().provider.block.attributes);
    const { client, diagnostics } = connectAdmin(config);
    this.client = undefined;
    if (!client) return { diagnostics };
    const problem = await verifyAdminKey(client);
    if (problem) return { diagnostics: [problem] };
    this.client = client;
    return { diagnostics };
  }

  public UpgradeResourceState(req: Request): Response {
    if (!isResourceType(req.type_name)) return { diagnostics: [unknownType(req.type_name)] };
    const json: Buffer | undefined = req.raw_state?.json;
    if (!json || json.length === 0) {
      return { diagnostics: [errorDiagnostic('Unsupported state', 'The state has no JSON form (flatmap states predate this provider).')] };
    }
    if (Number(req.version) > RESOURCE_SCHEMA_VERSION) {
      return { diagnostics: [errorDiagnostic('State from a newer provider', `Schema version ${req.version} is newer than this provider's ${RESOURCE_SCHEMA_VERSION}.`)] };
    }
    // Version 0 is the only version so far: the stored JSON is already the current shape.
    const state = JSON.parse(json.toString('utf8')) as TfObject;
    return { upgraded_state: encodeObject(state, attributesOf(req.type_name)), diagnostics: [] };
  }

  public async ReadResource(req: Request): Promise<Response> {
    if (!isResourceType(req.type_name)) return { diagnostics: [unknownType(req.type_name)] };
    const attributes = attributesOf(req.type_name);
    const state = decodeObject(req.current_state, attributes);
    if (!state) return { new_state: encodeObject(null, attributes), diagnostics: [], private: req.private };
    if (!this.client) return { new_state: req.current_state, diagnostics: [NOT_CONFIGURED], private: req.private };
    try {
      const fresh = await RESOURCE_HANDLERS[req.type_name].read(this.client, state);
      return { new_state: encodeObject(fresh, attributes), diagnostics: [], private: req.private };
    } catch (e) {
      return { new_state: req.current_state, diagnostics: [diagnosticFromError(`Reading ${req.type_name}`, e)], private: req.private };
    }
  }

  public async PlanResourceChange(req: Request): Promise<Response> {
    if (!isResourceType(req.type_name)) return { diagnostics: [unknownType(req.type_name)] };
    const attributes = attributesOf(req.type_name);
    const prior = decodeObject(req.prior_state, attributes);
    const proposed = decodeObject(req.proposed_new_state, attributes);
    const spec = RESOURCE_SPECS[req.type_name];
    const schema = providerSchema().resource_schemas[req.type_name];
    const { planned, requiresReplace } = planChange(schema, spec, prior, proposed);
    let diagnostics: Diagnostic[] = [];
    if (proposed && this.client) {
      try {
        diagnostics = await this.references.problems(this.client, spec.kind, prior, proposed);
      } catch (e) {
        diagnostics = [diagnosticFromError(`Planning ${req.type_name}`, e)];
      }
    }
    this.references.note(spec.kind, planned);
    return {
      planned_state: encodeObject(planned, attributes),
      requires_replace: requiresReplace.map((name) => ({ steps: [{ attribute_name: name }] })),
      planned_private: req.prior_private,
      diagnostics,
    };
  }

  public async ApplyResourceChange(req: Request): Promise<Response> {
    if (!isResourceType(req.type_name)) return { diagnostics: [unknownType(req.type_name)] };
    const attributes = attributesOf(req.type_name);
    const prior = decodeObject(req.prior_state, attributes);
    const planned = decodeObject(req.planned_state, attributes);
    if (!this.client) return { new_state: encodeObject(prior, attributes), diagnostics: [NOT_CONFIGURED] };
    if (this.stopping) {
      return { new_state: encodeObject(prior, attributes), diagnostics: [errorDiagnostic('Provider stopping', 'Terraform asked the provider to stop.')] };
    }
    const handler = RESOURCE_HANDLERS[req.type_name];
    const action = planned === null ? 'Deleting' : prior === null ? 'Creating' : 'Updating';
    try {
      let next: TfObject | null = null;
      if (planned === null) await handler.delete(this.client, prior!);
      else if (prior === null) next = await handler.create(this.client, planned);
      else next = await handler.update(this.client, prior, planned);
      this.references.note(RESOURCE_SPECS[req.type_name].kind, next);
      return { new_state: encodeObject(next, attributes), private: Buffer.alloc(0), diagnostics: [] };
    } catch (e) {
      // On failure the object is as it was: absent for a create, the prior state otherwise.
      return { new_state: encodeObject(prior, attributes), diagnostics: [diagnosticFromError(`${action} ${req.type_name}`, e)] };
    }
  }

  public async ImportResourceState(req: Request): Promise<Response> {
    if (!isResourceType(req.type_name)) return { diagnostics: [unknownType(req.type_name)] };
    if (!this.client) return { imported_resources: [], diagnostics: [NOT_CONFIGURED] };
    try {
      const state = await RESOURCE_HANDLERS[req.type_name].importState(this.client, String(req.id));
      const imported = { type_name: req.type_name, state: encodeObject(state, attributesOf(req.type_name)), private: Buffer.alloc(0) };
      return { imported_resources: [imported], diagnostics: [] };
    } catch (e) {
      return { imported_resources: [], diagnostics: [diagnosticFromError(`Importing ${req.type_name} ${req.id}`, e)] };
    }
  }

  public StopProvider(): Response {
    this.stopping = true;
    return { Error: '' };
  }
}

/** The RPC names this service answers, for registering with grpc-js. */
export const PROVIDER_RPCS = [
  'GetMetadata',
  'GetProviderSchema',
  'GetResourceIdentitySchemas',
  'GetFunctions',
  'ValidateProviderConfig',
  'ValidateResourceConfig',
  'ValidateDataResourceConfig',
  'ReadDataSource',
  'ConfigureProvider',
  'UpgradeResourceState',
  'ReadResource',
  'PlanResourceChange',
  'ApplyResourceChange',
  'ImportResourceState',
  'StopProvider',
] as const;
