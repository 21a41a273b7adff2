import type { TfAttribute, TfType } from './terraform-schema-types.js';

/** The subset of JSON Schema that `z.toJSONSchema` produces for the contract's objects. */
export interface JsonSchema {
  type?: string;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  required?: string[];
  description?: string;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
}

export interface AttributeOptions {
  /** Description by dotted path, over the schema's own. */
  docs: Readonly<Record<string, string>>;
  /** A description for a field neither `docs` nor the schema describes (so that every attribute has one). */
  fallback?: (path: string) => string;
  path: string;
  required: boolean;
}

/** Follows a local `$ref` (zod emits them for schemas that carry a meta id). */
export function deref(schema: JsonSchema, root: JsonSchema): JsonSchema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace(/^#\/\$defs\//, '');
  const target = root.$defs?.[name];
  if (!target) throw new Error(`unresolvable $ref ${schema.$ref}`);
  return deref(target, root);
}

/**
 * Drops the `null` branch of a nullable field: Terraform's null already means "unset". `T or list of T` (a tool
 * rule's pattern or patterns) is the list: Terraform has no unions, and one value is a list of one.
 */
function withoutNull(schema: JsonSchema, root: JsonSchema, path: string): JsonSchema {
  const s = deref(schema, root);
  if (!s.anyOf) return s;
  let branches = s.anyOf.map((b) => deref(b, root)).filter((b) => b.type !== 'null');
  const list = branches.find((b) => b.type === 'array');
  if (list && branches.every((b) => b === list || b.type === deref(list.items ?? {}, root).type)) branches = [list];
  if (branches.length !== 1) throw new Error(`${path}: only "T or null" and "T or list of T" unions map to Terraform`);
  return { ...branches[0], description: s.description ?? branches[0].description };
}

/** The Terraform type of a value that is not an object: a primitive, or a list or map of them. */
function valueType(schema: JsonSchema, root: JsonSchema, path: string): TfType {
  const s = withoutNull(schema, root, path);
  if (s.type === 'array') return ['list', valueType(s.items ?? {}, root, `${path}[]`)];
  if (s.type === 'object' && !s.properties) return ['map', valueType(typeof s.additionalProperties === 'object' ? s.additionalProperties : {}, root, `${path}{}`)];
  return primitiveType(s, path);
}

function primitiveType(s: JsonSchema, path: string): TfType {
  switch (s.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      throw new Error(`${path}: JSON Schema type ${String(s.type)} has no Terraform primitive`);
  }
}

function describe(s: JsonSchema, opts: AttributeOptions): string | undefined {
  const text = opts.docs[opts.path] ?? s.description ?? opts.fallback?.(opts.path);
  if (text && s.enum && !opts.docs[opts.path]) return `${text} One of: ${s.enum.join(', ')}.`;
  return text;
}

/** One object property as a Terraform attribute (objects become single nested attributes). */
export function toAttribute(schema: JsonSchema, root: JsonSchema, opts: AttributeOptions): TfAttribute {
  const s = withoutNull(schema, root, opts.path);
  const flags = opts.required ? { required: true } : { optional: true };
  const description = describe(s, opts);
  const base = { ...(description ? { description } : {}), description_kind: 'plain' as const };
  if (s.type === 'array') {
    const items = withoutNull(s.items ?? {}, root, `${opts.path}[]`);
    if (items.type === 'object' && items.properties) {
      // A list of objects (a policy's tool_rules): a list nested attribute, its attributes described under PATH.NAME.
      return { nested_type: { attributes: toAttributes(items, root, opts.docs, opts.path, opts.fallback), nesting_mode: 'list' }, ...base, ...flags };
    }
    return { type: valueType(s, root, opts.path), ...base, ...flags };
  }
  if (s.type === 'object' && !s.properties) {
    return { type: valueType(s, root, opts.path), ...base, ...flags };
  }
  if (s.type === 'object') {
    return { nested_type: { attributes: toAttributes(s, root, opts.docs, opts.path, opts.fallback), nesting_mode: 'single' }, ...base, ...flags };
  }
  return { type: primitiveType(s, opts.path), ...base, ...flags };
}

/** Every property of an object schema, sorted by name as terraform prints them. */
export function toAttributes(
  schema: JsonSchema,
  root: JsonSchema,
  docs: Readonly<Record<string, string>>,
  prefix = '',
  fallback?: (path: string) => string,
): Record<string, TfAttribute> {
  const s = deref(schema, root);
  const required = new Set(s.required ?? []);
  const out: Record<string, TfAttribute> = {};
  for (const name of Object.keys(s.properties ?? {}).sort()) {
    const path = prefix ? `${prefix}.${name}` : name;
    out[name] = toAttribute(s.properties![name], root, { docs, fallback, path, required: required.has(name) });
  }
  return out;
}
