import type { z } from 'zod';
import { AgentgwError } from '../contract/index.js';

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
