import type { z } from 'zod';
import { containsUnknown, type TfObject } from './dynamic-value.js';
import { errorDiagnostic, type Diagnostic } from './diagnostics.js';

/** Null is "unset" in terraform and "left out" in the contract. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]));
  }
  return value;
}

/**
 * Checks the known attributes of a configuration against a contract schema; attributes that are
 * still unknown (references to other resources) are checked by the server at apply.
 */
export function validateConfig(schema: z.ZodObject, config: TfObject | null): Diagnostic[] {
  if (!config) return [];
  const known = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== null && !containsUnknown(v)));
  const result = schema.partial().safeParse(withoutNulls(known));
  if (result.success) return [];
  return result.error.issues.map((i) => errorDiagnostic('Invalid attribute value', `${i.path.join('.') || 'configuration'}: ${i.message}`, i.path));
}
