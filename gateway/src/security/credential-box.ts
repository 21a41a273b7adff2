// Secrets the gateway must read back (per-agent upstream MCP credentials): sealed with AES-256-GCM under a key derived
// from AGENTGW_SECRET_KEY for this purpose alone, and bound to what they belong to (a row moved to another agent or
// server does not open). Every node holds the same secret, so every node can open them; the database alone cannot.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { KeyHasher } from './keys.js';

const VERSION = 'v1';

export class CredentialBox {
  private readonly key: Buffer;

  constructor(hasher: KeyHasher, purpose: string) {
    // HMAC-SHA256 under the purpose's own key (HKDF of the secret): 32 bytes no other purpose shares.
    this.key = Buffer.from(hasher.sign(`${purpose}-encryption`, VERSION), 'base64url');
  }

  /** `v1.<iv|tag|ciphertext>`; `boundTo` (agent and server, say) must be given again to open it. */
  seal(plaintext: string, boundTo: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /** The plaintext, or undefined when it was sealed with another secret, for something else, or changed. */
  open(sealed: string, boundTo: string): string | undefined {
    if (!sealed.startsWith(`${VERSION}.`)) return undefined;
    try {
      const raw = Buffer.from(sealed.slice(VERSION.length + 1), 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(boundTo, 'utf8'));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** The box of per-agent upstream MCP credentials (`PUT /api/agents/{id}/mcp-credentials/{server}`). */
export function mcpCredentialBox(hasher: KeyHasher): CredentialBox {
  return new CredentialBox(hasher, 'mcp-credentials');
}

/** What a sealed MCP credential is bound to: its agent and its server. */
export function mcpCredentialBinding(agentId: string, server: string): string {
  return `mcp-credentials\u0000${agentId}\u0000${server}`;
}
