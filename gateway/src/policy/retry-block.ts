// rules.retry_block: the same request sent too often within a window, in one trace (or by one agent), is refused.
import { hash } from 'node:crypto';
import { AgentgwError } from '../contract/index.js';
import type { Check } from './admitting.js';
import { needCounters } from './counters-unavailable.js';

/**
 * Whether the JSON text may hold whitespace other than single spaces inside its strings: raw blanks (JSON leaves most
 * Unicode spaces as they are), two spaces, or the escapes JSON writes for tabs, line breaks and other control blanks.
 * A false alarm (a literal backslash before an n) only costs the slower exact path.
 */
const MAYBE_UNNORMALISED = /[^\S ]| {2}|\\[nrtf]|\\u000[bB]/;
const normaliseStrings = (_key: string, value: unknown) => (typeof value === 'string' ? value.replace(/\s+/g, ' ') : value);

/** The hash of a request's retry subject, with every run of whitespace in its texts read as one space. */
export function normalisedRequestHash(subject: unknown): string {
  let material = JSON.stringify(subject);
  if (MAYBE_UNNORMALISED.test(material)) material = JSON.stringify(subject, normaliseStrings);
  return hash('sha256', material, 'base64url').slice(0, 32);
}

export const retryBlockCheck: Check = {
  name: 'retry_block',
  async run(a) {
    const rules = a.eff.retryBlocks;
    if (rules.length === 0) return;
    // The request is hashed once, whatever the number of windows.
    const requestHash = normalisedRequestHash(a.view.retrySubject(a.body));
    for (const rule of rules) {
      const key = `${a.repeatScope}:${rule.window_seconds}:${requestHash}`;
      const seen = await needCounters(a.counters.countRepeat({ key, windowSeconds: rule.window_seconds, now: a.now }));
      if (seen > rule.max_repeats) {
        throw new AgentgwError(
          'retry_blocked',
          `This request was repeated ${seen} times within ${rule.window_seconds} s (limit ${rule.max_repeats}): change the request or stop retrying; the agent looks stuck in a loop.`,
        );
      }
    }
  },
};
