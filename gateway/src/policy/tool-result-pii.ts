// PII in what MCP upstreams answer (tool results, resource contents, prompt messages): redacted, never blocked. A
// policy whose rule is `block` or `redact` redacts here (CONTRACT: "results redacted"); results count as `user`.
import type { PiiType, Policy } from '../contract/index.js';
import { applyPiiRules } from './pii-rules.js';
import { type TextWalker } from './pii/index.js';
import { visitAll } from './pii/walk-all.js';

/** Each policy list as it reads results: `block` becomes `redact`, the rest unchanged (kept per list: plans reuse theirs). */
const redacting = new WeakMap<readonly Policy[], Policy[]>();

function asRedacting(policies: readonly Policy[]): Policy[] {
  let out = redacting.get(policies);
  if (!out) {
    out = policies.map((p) => (p.rules.pii === 'block' ? { ...p, rules: { ...p.rules, pii: 'redact' as const } } : p));
    redacting.set(policies, out);
  }
  return out;
}

/**
 * An MCP result read whole (tools/call content of any block type and structuredContent, resources/read contents,
 * prompts/get messages, and whatever a newer protocol version adds): everything the client will read.
 */
const walkResult: TextWalker = (body, visit, scope) => {
  if (!scope.has('user')) return;
  for (const key of Object.keys(body)) visitAll(body, key, visit, key);
};

/** The result with the PII every scanning policy looks for redacted (a copy when anything changed), and the types found. */
export function redactToolResult<T extends Record<string, unknown>>(policies: readonly Policy[], result: T): { result: T; found: PiiType[] } {
  const out = applyPiiRules(asRedacting(policies), result, walkResult);
  return { result: out.body as T, found: out.found };
}
