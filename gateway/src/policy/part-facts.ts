// What the checks compute over an agent's conversation, part by part, so that a part an earlier step sent is looked up
// by its bytes (json/part-cache.ts) and only the new parts are computed.
import { type BoundParts, tallyOf, toolsBytes } from '../accounting/tokens.js';
import { ofMember, perElement } from '../json/part-cache.js';
import { normalisedRequestHash } from './retry-block.js';

/**
 * Tallies of the elements of `body[member]` and the bytes of `body.tools`, for promptTokensUpperBound. `lead` names the
 * top-level member a view puts before the elements as one more message, `{content: body[lead]}` (a system prompt,
 * instructions), if any: its tally is looked up by its bytes too.
 */
export function boundParts(body: Record<string, unknown>, member: string, lead?: string): BoundParts {
  const tallies = perElement(body, member, 'tally', tallyOf);
  return {
    tallies: lead === undefined ? tallies : [ofMember(body, lead, 'lead-tally', (value) => tallyOf({ content: value })), ...tallies],
    toolsBytes: Array.isArray(body.tools) ? ofMember(body, 'tools', 'tools-bytes', (tools) => toolsBytes(tools as unknown[])) : undefined,
  };
}

/**
 * What retry blocking compares of `body[member]`: the array's elements, each as its normalised hash, or the member
 * itself when it is not an array (null when absent). Two conversations give equal subjects exactly when their
 * elements are equal up to runs of whitespace in their texts.
 */
export function retryPart(body: Record<string, unknown>, member: string): unknown {
  const value = body[member];
  if (!Array.isArray(value)) return value ?? null;
  return perElement(body, member, 'retry', normalisedRequestHash);
}

/** A top-level member as retry blocking compares it: its normalised hash (null when absent). */
export function retryMember(body: Record<string, unknown>, member: string): string | null {
  return body[member] == null ? null : ofMember(body, member, 'retry', normalisedRequestHash);
}
