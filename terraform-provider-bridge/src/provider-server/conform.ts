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
  return (value as unknown[]).map((v) => conformType(v, element));
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
    if (attr.nested_type) out[name] = isUnknown(v) ? v : conformObject(v, attr.nested_type.attributes);
    else out[name] = conformType(v, attr.type!);
  }
  return out;
}
