// MCP session ids that any node can serve (no affinity, no shared session store): the id says which protocol version
// the session speaks and is signed for the agent that opened it, so another node re-creates the session on sight and
// another agent's key cannot use it.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyHasher } from '../security/keys.js';

/** `<nonce>.<protocol version without dashes>.<signature>`: about 48 visible ASCII characters, short enough to be a trace id. */
const SESSION_ID = /^([A-Za-z0-9_-]{16})\.(\d{8})\.([A-Za-z0-9_-]{22})$/;

export class SessionIds {
  constructor(private readonly hasher: KeyHasher) {}

  mint(agentId: string, protocolVersion: string): string {
    const nonce = randomBytes(12).toString('base64url');
    const version = protocolVersion.replaceAll('-', '');
    return `${nonce}.${version}.${this.sign(nonce, version, agentId)}`;
  }

  /** The protocol version of a session id this deployment minted for this agent, else null. */
  verify(id: string, agentId: string): { protocolVersion: string } | null {
    const m = SESSION_ID.exec(id);
    if (!m) return null;
    const [, nonce, version, signature] = m;
    const expected = Buffer.from(this.sign(nonce!, version!, agentId));
    const given = Buffer.from(signature!);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    return { protocolVersion: SessionIds.protocolVersionOf(id) };
  }

  /** The protocol version an id (already verified) names. */
  static protocolVersionOf(id: string): string {
    const version = id.split('.')[1] ?? '';
    return `${version.slice(0, 4)}-${version.slice(4, 6)}-${version.slice(6)}`;
  }

  private sign(nonce: string, version: string, agentId: string): string {
    return this.hasher.hash(`mcp-session\u0000${nonce}\u0000${version}\u0000${agentId}`).slice(0, 22);
  }
}
