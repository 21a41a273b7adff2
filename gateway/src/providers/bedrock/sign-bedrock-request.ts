// SigV4 for bedrock-runtime (service "bedrock"), or a Bedrock API key as a bearer token.
// The signing library is loaded at the first signed call: gateways without a SigV4 Bedrock provider never hold it in memory.
import type { SignatureV4 } from '@smithy/signature-v4';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export type BedrockAuth = { kind: 'sigv4'; credentials: AwsCredentials; region: string } | { kind: 'bearer'; token: string } | { kind: 'none' };

export class BedrockSigner {
  private signer: Promise<SignatureV4> | undefined;

  constructor(private readonly auth: BedrockAuth) {}

  /** Headers to send: the given ones plus the authorization for this exact host, path and body. */
  async sign(host: string, path: string, body: string, headers: Record<string, string>, signingDate?: Date): Promise<Record<string, string>> {
    const auth = this.auth;
    if (auth.kind === 'bearer') return { ...headers, authorization: `Bearer ${auth.token}` };
    if (auth.kind !== 'sigv4') return headers;
    this.signer ??= createSigner(auth);
    const signer = await this.signer;
    const { HttpRequest } = await import('@smithy/protocol-http');
    const [pathname, query] = splitQuery(path);
    const request = new HttpRequest({
      method: 'POST',
      protocol: 'https:',
      hostname: host.replace(/:\d+$/, ''),
      path: pathname,
      query,
      headers: { ...headers, host },
      body,
    });
    const signed = await signer.sign(request, signingDate ? { signingDate } : undefined);
    return signed.headers as Record<string, string>;
  }
}

async function createSigner(auth: Extract<BedrockAuth, { kind: 'sigv4' }>): Promise<SignatureV4> {
  const [{ SignatureV4 }, { Hash }] = await Promise.all([import('@smithy/signature-v4'), import('@smithy/hash-node')]);
  return new SignatureV4({ credentials: auth.credentials, region: auth.region, service: 'bedrock', sha256: Hash.bind(null, 'sha256') });
}

function splitQuery(path: string): [string, Record<string, string>] {
  const at = path.indexOf('?');
  if (at === -1) return [path, {}];
  return [path.slice(0, at), Object.fromEntries(new URLSearchParams(path.slice(at + 1)))];
}
