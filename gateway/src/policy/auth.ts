import { hash as digest } from 'node:crypto';
import { AgentgwError } from '../contract/index.js';
import { KeyHasher } from '../security/keys.js';
import type { Snapshot } from '../storage/snapshot.js';
import type { StoredAgent } from '../storage/store.js';

/** `Bearer <KEY>`, with any whitespace around and between, "Bearer" in any case: exactly the two words below. */
const BEARER = /^\s*[Bb][Ee][Aa][Rr][Ee][Rr]\s+(\S+)\s*$/;

/**
 * The key of an `Authorization: Bearer <KEY>` header, else what is wrong with it: `missing` (no header, or an empty
 * one) or a sentence saying how the header is malformed (never quoting it: it may hold a key).
 */
export function bearerKey(header: string | undefined): { key: string } | { missing: true } | { malformed: string } {
  // The header as clients send it, read in one match (the same key the words below give); anything else is split.
  const plain = header === undefined ? null : BEARER.exec(header);
  if (plain) return { key: plain[1]! };
  const words = (header ?? '').trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return { missing: true };
  if (words[0]!.toLowerCase() !== 'bearer') return { malformed: 'it must be the word "Bearer", a space, then the key' };
  if (words.length === 1) return { malformed: '"Bearer" is followed by no key' };
  if (words.length > 2) return { malformed: `"Bearer" is followed by ${words.length - 1} words where it takes one key (a key has no spaces)` };
  return { key: words[1]! };
}

function unknownKey(): AgentgwError {
  return new AgentgwError('invalid_api_key', 'The API key is unknown or was revoked: check the key, or ask an admin to rotate it.');
}

/**
 * Agent key -> agent, from the in-memory snapshot, no database. A key is verified once per snapshot generation with the
 * HMAC the store keeps; after that a SHA-256 fingerprint of it finds the agent (the key itself is never kept).
 */
export function authenticateAgent(header: string | undefined, hasher: KeyHasher, snapshot: Snapshot, anthropic = false): StoredAgent {
  const parsed = bearerKey(header);
  if (!('key' in parsed)) {
    const how = anthropic ? '"x-api-key: <AGENT_KEY>" or "Authorization: Bearer <AGENT_KEY>"' : '"Authorization: Bearer <AGENT_KEY>"';
    if ('missing' in parsed) throw new AgentgwError('invalid_api_key', `Missing API key: send your agent key as ${how}.`);
    // Anthropic clients' x-api-key reaches here as a Bearer header.
    const which = anthropic ? 'The API key header (x-api-key or Authorization)' : 'The Authorization header';
    throw new AgentgwError('invalid_api_key', `${which} is malformed: ${parsed.malformed}. Send your agent key as ${how}.`);
  }
  const key = parsed.key;
  if (!key.startsWith('agk_')) {
    throw new AgentgwError('invalid_api_key', 'The API key is malformed: agent keys start with "agk_". Check the key you configured.');
  }
  const verified = snapshot.verifiedKeys;
  const fingerprint = digest('sha256', key, 'base64');
  const known = verified.get(fingerprint);
  if (known) return known;
  const hash = hasher.hash(key);
  const agent = snapshot.agentByKeyHash(hash);
  if (!agent || !KeyHasher.equal(agent.key_hash, hash)) throw unknownKey();
  verified.set(fingerprint, agent);
  return agent;
}

/**
 * The agent as the snapshot knows it now: a request authenticated before a reload (its body still arriving) gets the
 * agent's current policy, and fails like any revoked key when the key was rotated or the agent deleted meanwhile, or
 * with agent_suspended when it was suspended meanwhile.
 */
export function currentAgent(agent: StoredAgent, snapshot: Snapshot): StoredAgent {
  const current = snapshot.agentByKeyHash(agent.key_hash);
  if (!current || current.id !== agent.id) throw unknownKey();
  refuseSuspended(current);
  return current;
}

/** CONTRACT's 403 for a suspended agent: right after auth, before anything else is looked at. */
export function refuseSuspended(agent: StoredAgent): void {
  if (agent.suspended) {
    throw new AgentgwError(
      'agent_suspended',
      `Agent ${agent.name} is suspended: an admin suspended it, and its requests are refused until an admin resumes it (PATCH /api/agents/${agent.id} {"suspended": false}).`,
    );
  }
}
