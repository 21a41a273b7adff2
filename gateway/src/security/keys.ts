import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** 32 base62 characters: about 190 bits of entropy (rejection sampling keeps every character uniform). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

export type KeyKind = 'agk' | 'adk';

export function generateKey(kind: KeyKind): string {
  return `${kind}_${randomBase62(32)}`;
}

/** A short id for objects: not secret, just unique. */
export function generateId(prefix: string): string {
  return `${prefix}_${randomBase62(16)}`;
}

/** What the API shows of a key: enough to recognise it, far too little to use it. */
export function keyPrefix(key: string): string {
  return key.slice(0, 12);
}

export const KEY_PATTERN = /^(agk|adk)_[0-9A-Za-z]{32}$/;

/** Keys are stored as an HMAC keyed with the server's key secret, never in plaintext. */
export class KeyHasher {
  private readonly secret: Buffer;
  constructor(secret: string) {
    this.secret = Buffer.from(secret, 'utf8');
  }

  hash(key: string): string {
    return createHmac('sha256', this.secret).update(key).digest('base64url');
  }

  private readonly purposeKeys = new Map<string, Buffer>();

  /** An HMAC of `data` under a key derived from the secret for one purpose only (console session cookies, CSRF tokens). */
  sign(purpose: string, data: string): string {
    let key = this.purposeKeys.get(purpose);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', this.secret, Buffer.alloc(0), `agentgw-${purpose}`, 32));
      this.purposeKeys.set(purpose, key);
    }
    return createHmac('sha256', key).update(data).digest('base64url');
  }

  /** Constant-time comparison of two stored hashes. */
  static equal(a: string, b: string): boolean {
    const x = Buffer.from(a);
    const y = Buffer.from(b);
    return x.length === y.length && timingSafeEqual(x, y);
  }

  /**
   * Seals a value so only the holder of `passphrase` (for example an Idempotency-Key, stored only as its hash) can read it back.
   * Lets a retried POST return the same one-time API key without the database ever holding it in plaintext.
   */
  seal(passphrase: string, plaintext: string): string {
    const key = Buffer.from(hkdfSync('sha256', Buffer.from(passphrase), this.secret, 'agentgw-seal', 32));
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  unseal(passphrase: string, sealed: string): string | undefined {
    try {
      const raw = Buffer.from(sealed, 'base64url');
      const key = Buffer.from(hkdfSync('sha256', Buffer.from(passphrase), this.secret, 'agentgw-seal', 32));
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}
