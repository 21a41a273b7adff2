// MCP session ids that any node can serve (no affinity, no shared session store): the id says which protocol version
// the session speaks and what the client declared it takes (sampling, elicitation, roots), and is signed for the agent
// that opened it, so another node re-creates the session on sight, asks the client only what it takes, and another
// agent's key cannot use it.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { KeyHasher } from '../security/keys.js';

/**
 * `<nonce>.<protocol version without dashes>[.<client capabilities>].<signature>`: about 50 visible ASCII characters,
 * short enough to be a trace id. Ids without capabilities (earlier releases, clients that declare none) stay valid.
 */
const SESSION_ID = /^([A-Za-z0-9_-]{16})\.(\d{8})(?:\.([a-z]{1,8}))?\.([A-Za-z0-9_-]{22})$/;

/** The client capabilities an id carries, one letter each, in this order. */
const LETTERS: ReadonlyArray<[string, (c: ClientCapabilities) => boolean, (c: ClientCapabilities) => void]> = [
  ['s', (c) => !!c.sampling, (c) => void (c.sampling ??= {})],
  ['c', (c) => !!c.sampling?.context, (c) => void ((c.sampling ??= {}).context = {})],
  ['t', (c) => !!c.sampling?.tools, (c) => void ((c.sampling ??= {}).tools = {})],
  ['e', (c) => !!c.elicitation, (c) => void (c.elicitation ??= {})],
  ['f', (c) => !!c.elicitation?.form, (c) => void ((c.elicitation ??= {}).form = {})],
  ['u', (c) => !!c.elicitation?.url, (c) => void ((c.elicitation ??= {}).url = {})],
  ['r', (c) => !!c.roots, (c) => void (c.roots ??= {})],
  ['l', (c) => !!c.roots?.listChanged, (c) => void ((c.roots ??= {}).listChanged = true)],
];

function capabilityLetters(caps: unknown): string {
  if (typeof caps !== 'object' || caps === null) return '';
  return LETTERS.filter(([, has]) => {
    try {
      return has(caps as ClientCapabilities);
    } catch {
      return false;
    }
  })
    .map(([l]) => l)
    .join('');
}

export class SessionIds {
  constructor(private readonly hasher: KeyHasher) {}

  /** A new id; `clientCapabilities` as the client's initialize declared them. */
  mint(agentId: string, protocolVersion: string, clientCapabilities?: unknown): string {
    const nonce = randomBytes(12).toString('base64url');
    const version = protocolVersion.replaceAll('-', '');
    const caps = capabilityLetters(clientCapabilities);
    return caps ? `${nonce}.${version}.${caps}.${this.sign(nonce, `${version}.${caps}`, agentId)}` : `${nonce}.${version}.${this.sign(nonce, version, agentId)}`;
  }

  /** The protocol version of a session id this deployment minted for this agent, else null. */
  verify(id: string, agentId: string): { protocolVersion: string } | null {
    const m = SESSION_ID.exec(id);
    if (!m) return null;
    const [, nonce, version, caps, signature] = m;
    const expected = Buffer.from(this.sign(nonce!, caps ? `${version!}.${caps}` : version!, agentId));
    const given = Buffer.from(signature!);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    return { protocolVersion: SessionIds.protocolVersionOf(id) };
  }

  /** The protocol version an id (already verified) names. */
  static protocolVersionOf(id: string): string {
    const version = id.split('.')[1] ?? '';
    return `${version.slice(0, 4)}-${version.slice(4, 6)}-${version.slice(6)}`;
  }

  /** The client capabilities an id (already verified) names: what the client said it takes (sampling, elicitation, roots). */
  static clientCapabilitiesOf(id: string): ClientCapabilities {
    const parts = id.split('.');
    const caps: ClientCapabilities = {};
    if (parts.length !== 4) return caps;
    for (const [letter, , set] of LETTERS) if (parts[2]!.includes(letter)) set(caps);
    return caps;
  }

  private sign(nonce: string, version: string, agentId: string): string {
    return this.hasher.hash(`mcp-session\u0000${nonce}\u0000${version}\u0000${agentId}`).slice(0, 22);
  }
}
