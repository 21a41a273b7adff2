import { randomBytes } from 'node:crypto';

let sequence = 0;
let pool = Buffer.alloc(0);
let offset = 0;

/**
 * `req_` + 9 base36 characters of time + 4 of a per-process sequence + 16 hex random: unique across nodes, and
 * increasing in time, so usage-record indexes grow at their end instead of touching a random page per row.
 */
export function newRequestId(now = Date.now()): string {
  if (offset + 8 > pool.length) {
    pool = randomBytes(8 * 512);
    offset = 0;
  }
  const random = pool.toString('hex', offset, offset + 8);
  offset += 8;
  sequence = (sequence + 1) % 1_679_616;
  return `req_${now.toString(36).padStart(9, '0')}${sequence.toString(36).padStart(4, '0')}${random}`;
}
