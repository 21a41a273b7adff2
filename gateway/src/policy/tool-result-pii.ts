// PII in what MCP upstreams answer (tool results, resource contents, prompt messages): redacted, never blocked. A
// policy whose rule is `block` or `redact` redacts here (CONTRACT: "results redacted"); results count as `user`.
import type { PiiType, Policy } from '../contract/index.js';
import { applyPiiRules } from './pii-rules.js';
import { type TextWalker } from './pii/index.js';
import { isObject, visitField } from './pii/request-texts.js';

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

/** A content block: text, or an embedded resource with text. */
function visitBlock(block: unknown, visit: Parameters<TextWalker>[1]): void {
  if (!isObject(block)) return;
  visitField(block, 'text', visit);
  if (isObject(block.resource)) visitField(block.resource, 'text', visit);
}

/** Texts of an MCP result: tools/call content and structuredContent, resources/read contents, prompts/get messages. */
const walkResult: TextWalker = (body, visit, scope) => {
  if (!scope.has('user')) return;
  if (Array.isArray(body.content)) for (const b of body.content) visitBlock(b, visit);
  if (Array.isArray(body.contents)) for (const c of body.contents) visitBlock(c, visit);
  if (Array.isArray(body.messages)) for (const m of body.messages) if (isObject(m)) visitBlock(m.content, visit);
  if (body.structuredContent !== undefined) {
    // As JSON text under the field name the PII module decodes ("arguments"), then back to the object.
    const holder: Record<string, unknown> = { arguments: JSON.stringify(body.structuredContent) };
    const before = holder.arguments;
    visitField(holder, 'arguments', visit);
    if (holder.arguments !== before) body.structuredContent = JSON.parse(holder.arguments as string);
  }
};

/** The result with the PII every scanning policy looks for redacted (a copy when anything changed), and the types found. */
export function redactToolResult<T extends Record<string, unknown>>(policies: readonly Policy[], result: T): { result: T; found: PiiType[] } {
  const out = applyPiiRules(asRedacting(policies), result, walkResult);
  return { result: out.body as T, found: out.found };
}
