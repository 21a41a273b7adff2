import type { TfAttribute, TfType } from '../schema/terraform-schema-types.js';
import { isUnknown, type TfObject, type TfValue } from './dynamic-value.js';

function conformType(value: unknown, type: TfType): TfValue {
  if (value === null || value === undefined) return null;
  if (isUnknown(value)) return value;
  if (type === 'string') return String(value);
  // cty sends numbers that do not fit a double as decimal strings.
  if (type === 'number') return typeof value === 'number' ? value : Number(value);
  if (type === 'bool') return Boolean(value);
  const [kind, element] = type;
  if (kind === 'map') {
    return Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, conformType(v, element)]));
  }
  // A list attribute the API holds as one value (a tool rule's single pattern) is a list of one.
  return (Array.isArray(value) ? value : [value]).map((v) => conformType(v, element));
}

/**
 * Shapes a value as the schema's object type: every attribute present (null when missing), nothing extra.
 * cty rejects unexpected attributes, and a state read from JSON or the API may have too many or too few.
 */
export function conformObject(value: unknown, attributes: Record<string, TfAttribute>): TfObject | null {
  if (value === null || value === undefined) return null;
  const source = value as Record<string, unknown>;
  const out: TfObject = {};
  for (const [name, attr] of Object.entries(attributes)) {
    const v = source[name];
    const nested = attr.nested_type;
    if (!nested) out[name] = conformType(v, attr.type!);
    else if (isUnknown(v)) out[name] = v;
    else if (nested.nesting_mode === 'list') out[name] = v === null || v === undefined ? null : (v as unknown[]).map((e) => (isUnknown(e) ? e : conformObject(e, nested.attributes)));
    else out[name] = conformObject(v, nested.attributes);
  }
  return out;
}
