import { Token } from 'cdktf';
import type { IConstruct } from 'constructs';
import { camelCase, type Attrs, type Field, type KindDescriptor } from '@agentgw/cli';
import type { z } from 'zod';

/** True when a value holds a reference that only terraform (or the synth step) can resolve. */
export function containsToken(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Token.isUnresolved(value)) return true;
  if (Array.isArray(value)) return value.some(containsToken);
  if (typeof value === 'object') return Object.values(value).some(containsToken);
  return false;
}

type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;

/**
 * The props a construct takes, read from the contract's declarative entry: camelCase names (as CDKTF writes them),
 * the contract's own value types (enums stay enums), null left out (terraform's unset is `undefined`).
 */
export type ContractProps<T> = T extends readonly (infer U)[]
  ? ContractProps<U>[]
  : T extends object
    ? { readonly [K in keyof T as K extends string ? Camel<K> : K]: ContractProps<Exclude<T[K], null>> }
    : T;

/** camelCase props back to the contract's field names, through nested objects (labels keep their keys). */
function contractValue(fields: readonly Field[], props: Attrs): Attrs {
  const out: Attrs = {};
  for (const f of fields) {
    const v = props[camelCase(f.name)];
    if (v === undefined) continue;
    const nested = f.shape.type === 'object' && v !== null && typeof v === 'object' && !Array.isArray(v) && !Token.isUnresolved(v);
    out[f.name] = nested && f.shape.type === 'object' ? contractValue(f.shape.fields, v as Attrs) : v;
  }
  return out;
}

/** The contract's fields of a construct's props. */
export function contractFields(kind: KindDescriptor, props: object): Attrs {
  return contractValue(kind.fields, props as Attrs);
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

/** validateWithContract for a construct of one kind: its props read through the kind's fields. */
export function validateKind(scope: IConstruct, kind: KindDescriptor, props: object): void {
  validateWithContract(scope, kind.schemas.declared, contractFields(kind, props));
}
