import type { FastifyInstance } from 'fastify';
import { AgentgwError } from '../contract/index.js';

/**
 * Where the first NUL character sits in a JSON value (a string or a key), as a dotted path ('' for the value itself),
 * or null when it has none. Walked without recursion, as a body may nest deeply.
 */
export function nulCharacterAt(value: unknown): string | null {
  const stack: Array<{ v: unknown; path: string }> = [{ v: value, path: '' }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\0')) return path;
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const at = path === '' ? k : `${path}.${k}`;
        if (k.includes('\0')) return at;
        stack.push({ v: child, path: at });
      }
    }
  }
  return null;
}

/** Admin bodies hold no NUL characters: PostgreSQL's text cannot store them, and no name or label needs one. */
export function refuseNulCharacters(app: FastifyInstance): void {
  app.addHook('preValidation', async (req) => {
    if (req.body === undefined || req.body === null) return;
    const at = nulCharacterAt(req.body);
    if (at === null) return;
    throw new AgentgwError('validation_failed', `${at === '' ? 'The body' : at} contains a NUL character (\\u0000): remove it.`, { param: at === '' ? null : at });
  });
}
