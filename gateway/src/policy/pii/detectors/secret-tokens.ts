import type { PiiMatch } from '../pii-match.js';
import { charClassCount, looksRandom } from './entropy.js';

interface TokenPattern {
  name: string;
  pattern: RegExp;
  /** Extra test on the matched token for patterns whose prefix alone is too common. */
  accept?: (token: string) => boolean;
}

/** Credentials recognisable by their issuer's prefix; where a pattern has a group, the group is the secret. Each pattern is bounded or unambiguous, so it runs in linear time. */
const TOKEN_PATTERNS: readonly TokenPattern[] = [
  { name: 'aws-access-key-id', pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g },
  { name: 'github-token', pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/g },
  { name: 'slack-token', pattern: /(?<![A-Za-z0-9_-])xox[abposr]-[A-Za-z0-9-]{10,250}/g },
  { name: 'slack-webhook', pattern: /https:\/\/hooks\.slack\.com\/services\/T[A-Za-z0-9_]{6,32}\/B[A-Za-z0-9_]{6,32}\/[A-Za-z0-9_]{16,64}/g },
  { name: 'stripe-key', pattern: /(?<![A-Za-z0-9_])(?:sk|rk)_live_[A-Za-z0-9]{10,250}/g },
  { name: 'anthropic-key', pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,300}/g },
  {
    name: 'openai-key',
    pattern: /(?<![A-Za-z0-9_-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,300}/g,
    // "sk-" also starts ordinary hyphenated words; a key has digits and mixed case.
    accept: (t) => /\d/.test(t) && charClassCount(t.replace(/^sk-(?:proj-|svcacct-|admin-)?/, '')) >= 3,
  },
  { name: 'google-api-key', pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g },
  { name: 'jwt', pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g },
  {
    name: 'bearer-token',
    pattern: /\b[Bb]earer\s{1,4}([A-Za-z0-9._~+/-]{16,2048}=*)/dg,
    accept: (t) => looksRandom(t, 16) && /\d/.test(t),
  },
  {
    name: 'basic-auth',
    pattern: /\bBasic\s{1,4}([A-Za-z0-9+/]{12,2048}={0,2})(?![A-Za-z0-9+/=])/dg,
    accept: (t) => looksRandom(t, 12),
  },
];

// An AWS secret access key is 40 base64 characters; only counted near an AWS or secret label or a key id.
const AWS_CONTEXT = /aws|secret|AKIA|ASIA/i;
const AWS_SECRET_CHARS = 40;

/** A-Z, a-z, 0-9, / and +: the characters of a base64 run (one table look-up: chars.ts's range tests measured 20-30% slower here). */
const BASE64_CHAR = new Uint8Array(128);
for (let c = 0; c < 128; c++) BASE64_CHAR[c] = /[A-Za-z0-9/+]/.test(String.fromCharCode(c)) ? 1 : 0;
const isBase64Char = (c: number) => c < 128 && BASE64_CHAR[c] === 1;

/**
 * Maximal runs of base64 characters exactly 40 long (as /[A-Za-z0-9/+]{40,}/g would find them, length checked after),
 * read a character at a time: a regular expression tried at every position of every word cost about 15 ns a character.
 */
export function findAwsSecretKeys(text: string, out: PiiMatch[]): void {
  let i = 0;
  while (i < text.length) {
    if (!isBase64Char(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < text.length && isBase64Char(text.charCodeAt(i))) i++;
    if (i - start !== AWS_SECRET_CHARS || text[i] === '=') continue;
    const token = text.slice(start, i);
    // Hex digests (git SHAs) have one letter case; a key mixes both cases and digits or symbols.
    if (!/[a-z]/.test(token) || !/[A-Z]/.test(token) || !/[0-9/+]/.test(token)) continue;
    if (!AWS_CONTEXT.test(text.slice(Math.max(0, start - 200), start))) continue;
    out.push({ type: 'secret', start, end: i });
  }
}

// The prefixes of all token patterns in one scan, so a text without any of them skips them all.
const ANY_TOKEN_PREFIX = /AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|xox[abposr]-|hooks\.slack\.com|[rs]k_live_|sk-|AIza|eyJ|[Bb]earer|Basic/;

export function findSecretTokens(text: string, out: PiiMatch[]): void {
  if (AWS_CONTEXT.test(text)) findAwsSecretKeys(text, out);
  if (!ANY_TOKEN_PREFIX.test(text)) return;
  for (const { pattern, accept } of TOKEN_PATTERNS) {
    pattern.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = pattern.exec(text)) !== null) {
      const span = m.indices?.[1] ?? [m.index, m.index + m[0].length];
      if (accept && !accept(text.slice(span[0], span[1]))) continue;
      out.push({ type: 'secret', start: span[0], end: span[1] });
    }
  }
}
