// SigV4 for bedrock-runtime (service "bedrock"), or a Bedrock API key as a bearer token.
import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export type BedrockAuth = { kind: 'sigv4'; credentials: AwsCredentials; region: string } | { kind: 'bearer'; token: string } | { kind: 'none' };

export class BedrockSigner {
  private readonly signer: SignatureV4 | null;

  constructor(private readonly auth: BedrockAuth) {
    this.signer =
      auth.kind === 'sigv4'
        ? new SignatureV4({ credentials: auth.credentials, region: auth.region, service: 'bedrock', sha256: Hash.bind(null, 'sha256') })
        : null;
  }

  /** Headers to send: the given ones plus the authorization for this exact host, path and body. */
  async sign(host: string, path: string, body: string, headers: Record<string, string>, signingDate?: Date): Promise<Record<string, string>> {
    if (this.auth.kind === 'bearer') return { ...headers, authorization: `Bearer ${this.auth.token}` };
    if (!this.signer) return headers;
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
    const signed = await this.signer.sign(request, signingDate ? { signingDate } : undefined);
    return signed.headers as Record<string, string>;
  }
}

function splitQuery(path: string): [string, Record<string, string>] {
  const at = path.indexOf('?');
  if (at === -1) return [path, {}];
  return [path.slice(0, at), Object.fromEntries(new URLSearchParams(path.slice(at + 1)))];
}
