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
  private signer: Promise<Signer> | undefined;

  constructor(private readonly auth: BedrockAuth) {}

  /** Headers to send: the given ones plus the authorization for this exact host, path and body. */
  async sign(host: string, path: string, body: string, headers: Record<string, string>, signingDate?: Date): Promise<Record<string, string>> {
    const auth = this.auth;
    if (auth.kind === 'bearer') return { ...headers, authorization: `Bearer ${auth.token}` };
    if (auth.kind !== 'sigv4') return headers;
    this.signer ??= createSigner(auth).catch((err: unknown) => {
      // A failed load is tried again at the next call rather than remembered.
      this.signer = undefined;
      throw err;
    });
    const { signer, HttpRequest } = await this.signer;
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

interface Signer {
  signer: SignatureV4;
  HttpRequest: typeof import('@smithy/protocol-http').HttpRequest;
}

async function createSigner(auth: Extract<BedrockAuth, { kind: 'sigv4' }>): Promise<Signer> {
  const [{ SignatureV4 }, { Hash }, { HttpRequest }] = await Promise.all([
    import('@smithy/signature-v4'),
    import('@smithy/hash-node'),
    import('@smithy/protocol-http'),
  ]);
  const signer = new SignatureV4({ credentials: auth.credentials, region: auth.region, service: 'bedrock', sha256: Hash.bind(null, 'sha256') });
  return { signer, HttpRequest };
}

function splitQuery(path: string): [string, Record<string, string>] {
  const at = path.indexOf('?');
  if (at === -1) return [path, {}];
  return [path.slice(0, at), Object.fromEntries(new URLSearchParams(path.slice(at + 1)))];
}
