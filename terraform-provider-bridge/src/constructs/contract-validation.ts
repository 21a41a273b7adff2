import { Token } from 'cdktf';
import type { IConstruct } from 'constructs';
import type { z } from 'zod';

/** True when a value holds a reference that only terraform (or the synth step) can resolve. */
export function containsToken(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Token.isUnresolved(value)) return true;
  if (Array.isArray(value)) return value.some(containsToken);
  if (typeof value === 'object') return Object.values(value).some(containsToken);
  return false;
}

/**
 * Checks the literal fields of a construct against the contract's schema at synth time,
 * so that a bad id or budget fails in `cdktf synth` rather than in apply. Fields holding references are skipped.
 */
export function validateWithContract(scope: IConstruct, schema: z.ZodObject, fields: Record<string, unknown>): void {
  scope.node.addValidation({
    validate: () => {
      const known = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && !containsToken(v)));
      const result = schema.partial().safeParse(known);
      if (result.success) return [];
      return result.error.issues.map((i) => `${scope.node.path}: ${i.path.join('.') || '(object)'} ${i.message}`);
    },
  });
}
