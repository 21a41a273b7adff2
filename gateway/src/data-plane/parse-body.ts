import type { z } from 'zod';
import { AgentgwError } from '../contract/index.js';
import { isKeptPart } from '../json/part-values.js';

/** Validates a data-plane body with its zod schema, turning the first issue into a sentence that names the field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AgentgwError('invalid_json', 'The request body must be a JSON object: send one with Content-Type: application/json.');
  }
  // With the input in each issue, a field of the wrong type is told apart from a missing one.
  const r = schema.safeParse(body, { reportInput: true });
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const field = [...issue.path, issue.keys[0]].join('.');
    throw new AgentgwError('validation_failed', `Unknown field ${JSON.stringify(field)}: remove it or check its spelling.`, { param: field });
  }
  const field = issue.path.join('.');
  const missing = issue.code === 'invalid_type' && issue.input === undefined;
  throw new AgentgwError(
    'validation_failed',
    missing ? `Missing required field ${JSON.stringify(field)}.` : `Invalid field ${JSON.stringify(field)}: ${issue.message}.`,
    { param: field || null },
  );
}

/** A schema split in two: the body with some arrays' elements unchecked, and the schema of those elements. */
export interface SchemaParts {
  shell: z.ZodType;
  elements: Record<string, z.ZodType>;
}

/** Per element schema, whether a kept part (json/part-values.ts) passes it: kept parts never change. */
const passes = new WeakMap<z.ZodType, WeakMap<object, boolean>>();

function elementPasses(schema: z.ZodType, element: unknown): boolean {
  if (!isKeptPart(element)) return schema.safeParse(element).success;
  let memo = passes.get(schema);
  if (memo === undefined) passes.set(schema, (memo = new WeakMap()));
  let ok = memo.get(element);
  if (ok === undefined) memo.set(element, (ok = schema.safeParse(element).success));
  return ok;
}

/**
 * Validates a body as parseBody(schema) does, without the parsed copy: the shell, then each element of the split arrays,
 * an element an agent sent before (a kept part) checked once. Anything that fails is checked again by `schema` whole,
 * which gives the error. `parts` must pass exactly the bodies that `schema` passes.
 */
export function checkBody(schema: z.ZodType, parts: SchemaParts, body: unknown): void {
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && parts.shell.safeParse(body).success) {
    let ok = true;
    for (const key in parts.elements) {
      const value = (body as Record<string, unknown>)[key];
      if (!Array.isArray(value)) continue;
      const element = parts.elements[key]!;
      for (let i = 0; ok && i < value.length; i++) ok = elementPasses(element, value[i]);
    }
    if (ok) return;
  }
  parseBody(schema, body);
}
