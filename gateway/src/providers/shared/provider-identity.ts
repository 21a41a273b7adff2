// Who an upstream is, for error sentences, and which strings must never appear in them.

export interface ProviderIdentity {
  /** Configured provider name, e.g. "openai" or "groq". */
  readonly name: string;
  readonly type: string;
  /** Secrets of this provider (keys, tokens), scrubbed from any upstream text the gateway repeats. */
  readonly secrets: readonly string[];
  /** What to tell an operator to check when the upstream rejects the gateway's credentials. */
  readonly credentialHint: string;
}

export function providerIdentity(name: string, type: string, secrets: Array<string | undefined>, credentialHint = 'its api_key'): ProviderIdentity {
  return { name, type, secrets: secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4), credentialHint };
}
