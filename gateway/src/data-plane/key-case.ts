// The case rule (CONTRACT, "unknown body fields"): in objects a dialect defines, a key that case-folds to a defined member
// without being it is refused. Go's encoding/json, behind many self-hosted upstreams, matches keys without case and keeps
// the last: `{"content":"hi","Content":"<what the checks never read>"}` would reach its model as the content.
import { CLIENT_NAMED, DIALECT_MEMBERS, TOOL_INPUT_BLOCKS } from '../contract/dialect-members.js';
import { AgentgwError } from '../contract/index.js';
import { isKeptPart } from '../json/part-values.js';

type Json = Record<string, unknown>;

/** Unicode simple case folding as Go applies it to keys (K, the Kelvin sign, is k; ſ, the long s, is s). */
const fold = (key: string) => key.toUpperCase().toLowerCase();

/** Each defined member by its folded form. */
const FOLDED: ReadonlyMap<string, string> = new Map([...DIALECT_MEMBERS].map((m) => [fold(m), m]));

/** How deep below the top level defined objects are checked: message, block, source, nested tool result block, its source. */
const MAX_DEPTH = 5;

/** True when `key` has a character outside lowercase ASCII letters, digits and `_` (only those can be a variant). */
function mayBeVariant(key: string): boolean {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f)) return true;
  }
  return false;
}

/** Parts an agent sent before (kept, frozen) that passed: checked once. */
const passed = new WeakSet<object>();

/**
 * Throws 400 `validation_failed` naming the first key, in the objects a dialect defines, that differs from a defined
 * member by case only. Objects under client-named members are not read.
 */
export function checkKeyCase(body: Json): void {
  walk(body, [], 0);
}

/**
 * The path of a key as the error names it, from the segments above it: built only for a refusal. Dot-joined, except that
 * an empty path takes the next segment alone (so a member named by the empty string at the top adds nothing).
 */
function pathOf(segments: ReadonlyArray<string | number>, key: string): string {
  let path = '';
  for (const s of [...segments, key]) path = path === '' ? String(s) : `${path}.${s}`;
  return path;
}

function walk(value: unknown, segments: Array<string | number>, depth: number): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      segments.push(i);
      walkElement(value[i], segments, depth);
      segments.pop();
    }
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const o = value as Json;
  for (const key of Object.keys(o)) {
    if (mayBeVariant(key) && !DIALECT_MEMBERS.has(key)) {
      const member = FOLDED.get(fold(key));
      if (member !== undefined) {
        const param = pathOf(segments, key);
        throw new AgentgwError(
          'validation_failed',
          `Field ${JSON.stringify(param)} differs from ${JSON.stringify(member)} only by case: send ${JSON.stringify(member)} (upstreams that match keys without case would read both).`,
          { param },
        );
      }
    }
    if (depth >= MAX_DEPTH || CLIENT_NAMED.has(key) || (key === 'input' && TOOL_INPUT_BLOCKS.has(o.type))) continue;
    const child = o[key];
    if (typeof child === 'object' && child !== null) {
      segments.push(key);
      walk(child, segments, depth + 1);
      segments.pop();
    }
  }
}

/** An element of a list: a part sent before is checked the first time only. */
function walkElement(element: unknown, segments: Array<string | number>, depth: number): void {
  if (typeof element !== 'object' || element === null || passed.has(element)) return;
  walk(element, segments, depth);
  if (isKeptPart(element)) passed.add(element);
}
