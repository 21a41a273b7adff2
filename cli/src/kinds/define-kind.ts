import { DeclarativeFile } from '@agentgw/gateway/contract';
import type { z } from 'zod';
import { isAdminApiError } from '../admin-client/errors.js';
import type { Attrs, Field, FieldShape, Kind, KindApi, KindDescriptor, Section } from './descriptor.js';

/** What a kind module writes by hand: the schemas to read, and the facts no schema can say. */
export interface KindSpec {
  kind: Kind;
  section: Section;
  description: string;
  /** What the server answers for an object. */
  entity: z.ZodObject;
  /** What the server answers to create, when it shows more then (secrets); defaults to `entity`. */
  created?: z.ZodObject;
  create: z.ZodObject;
  update: z.ZodObject;
  /** Identity fields in key order. */
  identity: readonly string[];
  /** Fields the update body accepts that the contract still forbids changing. */
  immutable?: readonly string[];
  /** Fields holding the id of an object of another kind. */
  references?: Readonly<Record<string, Kind>>;
  /** Read-only fields worth keeping (server ids); other read-only fields change without a write. */
  serverFields?: readonly string[];
  /** Fields whose absence from the file leaves the live value alone (fields the contract has not yet are ignored). */
  unmanagedWhenAbsent?: readonly string[];
  /** Defaults the contract states in code (e.g. its policy defaults), over the ones read from the schemas. */
  defaults?: Attrs;
  /** Descriptions by dotted path, over the contract's own. */
  docs?: Readonly<Record<string, string>>;
  api: Omit<KindApi, 'find'> & Partial<Pick<KindApi, 'find'>>;
  /** Why a live object cannot be written through the admin interface; none: every object can. */
  readOnlyReason?: (entity: Attrs) => string | null;
  /** Whether writing the object takes a key with the admin role (CONTRACT's RBAC); none: a tenant_admin key may too. */
  adminOnly?: (entity: Attrs) => boolean;
}

interface Unwrapped {
  schema: z.ZodType;
  optional: boolean;
  nullable: boolean;
  zodDefault: unknown;
  description?: string;
}

/** Peels optional, nullable and default off a schema, keeping the first description found on the way. */
function unwrap(schema: z.ZodType): Unwrapped {
  let s = schema as z.ZodType & { unwrap?: () => z.ZodType };
  const out: Unwrapped = { schema: s, optional: false, nullable: false, zodDefault: undefined, description: s.description };
  for (;;) {
    const type = s.type;
    if (type === 'optional') out.optional = true;
    else if (type === 'nullable') out.nullable = true;
    else if (type === 'default' || type === 'prefault') {
      out.optional = true;
      out.zodDefault = structuredClone((s.def as unknown as { defaultValue: unknown }).defaultValue);
    } else if (type === 'readonly') {
      // nothing to note
    } else break;
    s = s.unwrap!() as typeof s;
    out.description ??= s.description;
  }
  out.schema = s;
  return out;
}

/** Descriptions of a dotted path: the kind module's own, and one the contract gives on another schema of the kind (its entity). */
type Describe = (path: string) => { own?: string; contract?: string };

/** The schema of a dotted path inside an object schema, through optional, nullable and nested objects. */
function schemaAt(schema: z.ZodType, path: string): z.ZodType | undefined {
  let s: z.ZodType | undefined = schema;
  for (const name of path.split('.')) {
    const obj: (z.ZodType & { shape?: Record<string, z.ZodType> }) | undefined = s && (unwrap(s).schema as z.ZodType & { shape?: Record<string, z.ZodType> });
    s = obj?.type === 'object' ? obj.shape?.[name] : undefined;
  }
  return s;
}

function descriptionAt(schemas: z.ZodType[], path: string): string | undefined {
  for (const schema of schemas) {
    const s = schemaAt(schema, path);
    const text = s && unwrap(s).description;
    if (text) return text;
  }
  return undefined;
}

function shapeOf(schema: z.ZodType, path: string, docs: Describe): FieldShape {
  const s = unwrap(schema).schema as z.ZodType & Record<string, any> & { def: Record<string, any> };
  switch (s.type) {
    case 'string':
    case 'number':
    case 'boolean':
      return { type: s.type };
    case 'enum':
      return { type: 'enum', values: [...(s.options as string[])] };
    case 'literal':
      return { type: 'enum', values: [...(s.def.values as unknown[])].map(String) };
    case 'array':
      return { type: 'list', item: shapeOf(s.element, `${path}[]`, docs) };
    case 'record':
      return { type: 'map', value: shapeOf(s.def.valueType, `${path}{}`, docs) };
    case 'union': {
      // `T | T[]` (a tool rule's pattern or list of patterns): a list, which one value also reads as.
      const options = s.options as z.ZodType[];
      const list = options.find((o) => unwrap(o).schema.type === 'array');
      const single = list && (unwrap(list).schema as z.ZodType & { element: z.ZodType }).element;
      if (list && single && options.every((o) => o === list || unwrap(o).schema.type === unwrap(single).schema.type)) return shapeOf(list, path, docs);
      throw new Error(`${path}: a union other than "T or list of T" has no declarative meaning; describe it in cli/src/kinds/define-kind.ts`);
    }
    case 'object':
      return {
        type: 'object',
        fields: Object.entries(s.shape as Record<string, z.ZodType>).map(([name, child]) => fieldOf(name, child, `${path}.${name}`, docs)),
      };
    default:
      throw new Error(`${path}: the contract's zod type "${s.type}" has no declarative meaning; describe it in cli/src/kinds/define-kind.ts`);
  }
}

/** The value the server keeps for a field that is left out, when the schema says it. */
function derivedDefault(u: Unwrapped, shape: FieldShape): unknown {
  if (u.zodDefault !== undefined) return u.zodDefault;
  if (u.nullable) return null;
  if (shape.type === 'map') return {};
  if (shape.type === 'boolean') return false;
  if (shape.type === 'object') {
    const out: Attrs = {};
    for (const f of shape.fields) {
      if (f.default === undefined) return undefined;
      out[f.name] = f.default;
    }
    return out;
  }
  return undefined;
}

function humanise(name: string): string {
  const words = name.replace(/_/g, ' ');
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}.`;
}

function fieldOf(name: string, schema: z.ZodType, path: string, docs: Describe): Field {
  const u = unwrap(schema);
  const shape = shapeOf(schema, path, docs);
  const kindDoc = docs(path);
  return {
    name,
    path,
    shape,
    optional: u.optional,
    nullable: u.nullable,
    default: derivedDefault(u, shape),
    unordered: shape.type === 'list' && shape.item.type !== 'object' && shape.item.type !== 'list',
    description: kindDoc.own ?? u.description ?? kindDoc.contract ?? humanise(name),
    identity: false,
    immutable: false,
    onCreate: false,
    onUpdate: false,
    unmanagedWhenAbsent: false,
  };
}

/** Overlays defaults the contract states in code over derived ones, into nested fields as well. */
function withDefaults(fields: Field[], defaults: Attrs | undefined): Field[] {
  if (!defaults) return fields;
  return fields.map((f) => {
    if (!(f.name in defaults)) return f;
    const value = defaults[f.name];
    const shape =
      f.shape.type === 'object' && value && typeof value === 'object'
        ? { ...f.shape, fields: withDefaults([...f.shape.fields], value as Attrs) }
        : f.shape;
    return { ...f, shape, default: structuredClone(value) };
  });
}

/** The schema of one entry of the declarative file's section. */
export function declaredSchema(section: Section): z.ZodObject {
  let s = DeclarativeFile.shape[section] as z.ZodType & { unwrap?: () => z.ZodType; element?: z.ZodType };
  while (s.type !== 'array') s = s.unwrap!() as typeof s;
  return s.element as z.ZodObject;
}

/** A descriptor from the contract's schemas plus the spec's few hand-written facts. */
export function defineKind(spec: KindSpec): KindDescriptor {
  const declared = declaredSchema(spec.section);
  const docs = spec.docs ?? {};
  const created = spec.created ?? spec.entity;
  const describeFromContract: Describe = (path) => ({ own: docs[path], contract: descriptionAt([spec.entity, created, spec.update], path) });
  const createKeys = new Set(Object.keys(spec.create.shape));
  const updateKeys = new Set(Object.keys(spec.update.shape));
  const unmanaged = new Set(spec.unmanagedWhenAbsent ?? []);
  const immutable = new Set(spec.immutable ?? []);
  const names = Object.keys(declared.shape);
  for (const [what, list] of [
    ['identity', spec.identity],
    ['immutable', spec.immutable ?? []],
    ['references', Object.keys(spec.references ?? {})],
  ] as const) {
    for (const n of list) if (!names.includes(n)) throw new Error(`${spec.kind}: ${what} names "${n}", which the declarative file's ${spec.section} entries lack`);
  }

  const fields = withDefaults(
    names.map((name) => {
      const f = fieldOf(name, declared.shape[name] as z.ZodType, name, describeFromContract);
      const identity = spec.identity.includes(name);
      const fixed = immutable.has(name) || !updateKeys.has(name);
      return {
        ...f,
        default: identity || !f.optional ? undefined : f.default,
        identity,
        immutable: fixed,
        onCreate: createKeys.has(name),
        onUpdate: !fixed,
        references: spec.references?.[name],
        unmanagedWhenAbsent: unmanaged.has(name),
      };
    }),
    spec.defaults,
  ).map((f) => (f.identity ? { ...f, default: undefined } : f));

  for (const f of fields) {
    if (!f.identity && !f.onCreate && !f.onUpdate) {
      throw new Error(`${spec.kind}: "${f.name}" is in the declarative file but neither the create nor the update body: it could never be written`);
    }
  }

  const entityKeys = Object.keys(spec.entity.shape);
  const readOnly = entityKeys.filter((k) => !names.includes(k));
  const serverFields = (spec.serverFields ?? []).filter((k) => readOnly.includes(k));
  const defaults: Attrs = {};
  for (const f of fields) if (f.default !== undefined) defaults[f.name] = structuredClone(f.default);

  const api: KindApi = {
    ...spec.api,
    find:
      spec.api.find ??
      (async (client, key) => {
        try {
          return await spec.api.get(client, key);
        } catch (e) {
          if (isAdminApiError(e) && e.status === 404) return null;
          throw e;
        }
      }),
  };

  const describe = (path: string): string => {
    if (docs[path]) return docs[path];
    const declaredField = findField(fields, path);
    if (declaredField?.description) return declaredField.description;
    return descriptionAt([created, spec.entity], path) ?? humanise(path.split('.').pop()!);
  };

  return {
    kind: spec.kind,
    section: spec.section,
    terraformType: `agentgw_${spec.kind}`,
    description: spec.description,
    fields,
    identity: [...spec.identity],
    readOnly,
    serverFields,
    secrets: Object.keys(created.shape).filter((k) => !entityKeys.includes(k)),
    defaults,
    docs,
    describe,
    api,
    readOnlyReason: spec.readOnlyReason ?? (() => null),
    adminOnly: spec.adminOnly ?? (() => false),
    schemas: { declared, entity: spec.entity, created, create: spec.create, update: spec.update },
  };
}

/** The field at a dotted path (`rules.pii`), through nested objects. */
export function findField(fields: readonly Field[], path: string): Field | undefined {
  const [head, ...rest] = path.split('.');
  const f = fields.find((x) => x.name === head);
  if (!f || rest.length === 0) return f;
  return f.shape.type === 'object' ? findField(f.shape.fields, rest.join('.')) : undefined;
}
