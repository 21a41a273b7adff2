import { randomHex } from './random-hex.js';

let sequence = 0;

/**
 * `req_` + 9 base36 characters of time + 4 of a per-process sequence + 16 hex random: unique across nodes, and
 * increasing in time, so usage-record indexes grow at their end instead of touching a random page per row.
 */
export function newRequestId(now = Date.now()): string {
  const random = randomHex(8);
  sequence = (sequence + 1) % 1_679_616;
  return `req_${now.toString(36).padStart(9, '0')}${sequence.toString(36).padStart(4, '0')}${random}`;
}
