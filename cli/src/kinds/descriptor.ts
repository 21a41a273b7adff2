import type { z } from 'zod';
import type { AdminClient } from '../admin-client/admin-client.js';

export type Kind = 'tenant' | 'policy' | 'agent' | 'route';
export type Section = 'tenants' | 'policies' | 'agents' | 'routes';

/** An object's fields by name: normalised attributes, bodies, entities. */
export type Attrs = Record<string, unknown>;

/** What a field holds, as far as normalising, diffing, flags and the Terraform schema need to know. */
export type FieldShape =
  | { type: 'string' | 'number' | 'boolean' }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'list'; item: FieldShape }
  | { type: 'map'; value: FieldShape }
  | { type: 'object'; fields: readonly Field[] };

/** One field of the declarative file's entry for a kind, read from the contract's zod schema. */
export interface Field {
  name: string;
  /** Dotted from the top of the object: `rules.pii`. */
  path: string;
  shape: FieldShape;
  /** The file may leave it out. */
  optional: boolean;
  /** null is a value of its own (unset, unlimited, none). */
  nullable: boolean;
  /** What the server stores when the file leaves it out; undefined when nothing is known (see `unmanagedWhenAbsent`). */
  default: unknown;
  /** A list whose order carries no meaning: another order is not a change. */
  unordered: boolean;
  description?: string;
  // The following are only meaningful on top-level fields.
  /** Part of the identity the file names the object by. */
  identity: boolean;
  /** Settable on create only: a new value cannot be applied in place. */
  immutable: boolean;
  /** The create request carries it. */
  onCreate: boolean;
  /** The update request carries it. */
  onUpdate: boolean;
  /** The id of an object of this kind. */
  references?: Kind;
  /** Left out of the file = the live value is left alone (never planned as a change). */
  unmanagedWhenAbsent: boolean;
}

/** What the kinds need of the admin client. */
export type KindClient = Pick<
  AdminClient,
  | 'listAllTenants'
  | 'getTenant'
  | 'createTenant'
  | 'updateTenant'
  | 'deleteTenant'
  | 'listAllPolicies'
  | 'getPolicy'
  | 'putPolicy'
  | 'deletePolicy'
  | 'listAllAgents'
  | 'getAgent'
  | 'createAgent'
  | 'updateAgent'
  | 'deleteAgent'
  | 'listAllRoutes'
  | 'getRoute'
  | 'putRoute'
  | 'deleteRoute'
>;

/** How one kind is read and written over the admin interface. */
export interface KindApi {
  /** Every object the admin key may see; `tenant_id` narrows it on the server where the endpoint can. */
  list(client: KindClient, q?: { tenant_id?: string }): Promise<Attrs[]>;
  /** By the server's id; an AdminApiError 404 when absent. */
  get(client: KindClient, serverId: string): Promise<Attrs>;
  /** `key` is the identity (`acme`, `acme/bot`); the answer carries the secrets the server shows once. */
  create(client: KindClient, body: Attrs, key: string): Promise<Attrs>;
  update(client: KindClient, serverId: string, patch: Attrs): Promise<Attrs>;
  delete(client: KindClient, serverId: string): Promise<void>;
  /** The live object of this identity, or null. */
  find(client: KindClient, key: string): Promise<Attrs | null>;
}

/**
 * Everything the CLI, the reconcile engine and the Terraform bridge know about one declarative kind.
 * Built from the contract's zod schemas by `defineKind`; only facts the schemas cannot say are written by hand.
 */
export interface KindDescriptor {
  kind: Kind;
  /** The key of the declarative file that lists objects of this kind. */
  section: Section;
  terraformType: `agentgw_${Kind}`;
  description: string;
  /** The declarative file's fields, in the contract's order. */
  fields: readonly Field[];
  /** Names of the identity fields, in the order of the key (`tenant_id/name`). */
  identity: readonly string[];
  /** Fields only the server writes (timestamps, spend, key prefixes). */
  readOnly: readonly string[];
  /** Read-only fields that stay put between writes (server ids): Terraform keeps them as computed attributes. */
  serverFields: readonly string[];
  /** Fields the server shows once, in the answer to create (an agent's api_key). */
  secrets: readonly string[];
  /** Every optional field's value when left out; identity and required fields are absent. */
  defaults: Attrs;
  /** Descriptions the kind module gives over the contract's, by dotted path. */
  docs: Readonly<Record<string, string>>;
  /** The description of any field, declared or not, by dotted path: the kind module's, else the contract's, else its name. */
  describe(path: string): string;
  api: KindApi;
  /**
   * Why a live object cannot be written through the admin interface (a route of the server config), else null: such an
   * object is never changed, deleted or exported.
   */
  readOnlyReason(entity: Attrs): string | null;
  /**
   * Whether writing the object takes a key with the admin role (tenants, routes, global policies): a tenant_admin key's
   * plan leaves such live objects alone and refuses a file that would write one.
   */
  adminOnly(entity: Attrs): boolean;
  /** The contract's schemas this descriptor was read from. */
  schemas: {
    /** One entry of the declarative file. */
    declared: z.ZodObject;
    /** What the server answers for an object. */
    entity: z.ZodObject;
    /** What it answers to create (with secrets). */
    created: z.ZodObject;
    create: z.ZodObject;
    update: z.ZodObject;
  };
}

