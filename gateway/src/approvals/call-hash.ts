// What "the same call" means for an approval given after its timeout (CONTRACT: the tool and the canonical JSON of its
// arguments, normalised as retry_block normalises): keys sorted at every depth, runs of whitespace in texts as one space.
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

/** The hash of a call: its tool and canonical arguments (their text when they are not JSON). */
export function callHash(call: ProposedToolCall): string {
  return normalisedRequestHash({ tool: call.name, arguments: call.input === undefined ? { text: call.text } : canonical(call.input) });
}
