// What "the same call" means for an approval given after its timeout (CONTRACT: the tool and the canonical JSON of its
// arguments, normalised as retry_block normalises): keys sorted at every depth, runs of whitespace in texts as one space.
import { repeatsKey } from '../json/repeated-keys.js';
import { normalisedRequestHash } from '../policy/retry-block.js';
import type { ProposedToolCall } from '../policy/tool-rules.js';

/** The value with every object's keys in sorted order (arrays keep theirs). */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      Object.defineProperty(out, key, { value: canonical((value as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

/**
 * Arguments as a person should see them before approving: parsed JSON, or the text as written when it is not JSON or
 * repeats a key (clients disagree on which value of a repeated key counts: the person must see both).
 */
export function argumentsAsWritten(call: ProposedToolCall): unknown {
  if (call.input === undefined) return call.text;
  if (typeof call.input === 'object' && call.input !== null && typeof call.text === 'string' && repeatsKey(call.text)) return call.text;
  return call.input;
}

/** The hash of a call: its tool and canonical arguments (their text when they are not JSON or repeat a key). */
export function callHash(call: ProposedToolCall): string {
  const args = argumentsAsWritten(call);
  return normalisedRequestHash({ tool: call.name, arguments: typeof args === 'string' ? { text: args } : canonical(args) });
}
