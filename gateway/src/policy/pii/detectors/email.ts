import type { PiiDetector, PiiMatch } from '../pii-match.js';
import { isAsciiAlnum, isAsciiLetter, isWhitespace } from './chars.js';

const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;

function isLocalChar(c: number): boolean {
  // The dot-atom characters people actually use; quoted local parts are left out on purpose.
  return isAsciiAlnum(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
}

function isDomainChar(c: number): boolean {
  return isAsciiAlnum(c) || c === 46 || c === 45;
}

/**
 * A no-reply mailbox (`noreply@anthropic.com` in Claude Code's commit trailer, `no-reply@accounts.google.com`) is a
 * sender address no one reads: not a person's. `12345+name@users.noreply.github.com` does name a person and stays PII.
 */
const NO_REPLY = /^(?:no|do[-_.]?not)[-_.]?reply(?:[-_.+][a-z0-9]+)*$/i;

function validLocal(local: string): boolean {
  return local.length > 0 && local[0] !== '.' && local[local.length - 1] !== '.' && !local.includes('..');
}

/** At least two labels and an alphabetic (or punycode) TLD: rejects `user@localhost` and `pkg@1.2.3`. */
function validDomain(domain: string): boolean {
  const labels = domain.split('.');
  if (labels.length < 2) return false;
  for (const label of labels) {
    if (label.length === 0 || label.length > 63 || label[0] === '-' || label[label.length - 1] === '-') return false;
  }
  const tld = labels[labels.length - 1];
  if (tld.startsWith('xn--')) return tld.length > 4;
  if (tld.length < 2 || tld.length > 24) return false;
  for (let i = 0; i < tld.length; i++) if (!isAsciiLetter(tld.charCodeAt(i))) return false;
  return true;
}

/** The local part sits in a URL's user-info (`scheme://user@` or `scheme://user:pass@`): credentials, not a mailbox. */
function inUrlUserInfo(text: string, localStart: number): boolean {
  if (text.startsWith('://', localStart - 3)) return true;
  if (text.charCodeAt(localStart - 1) !== 58) return false;
  let k = localStart - 1;
  const floor = Math.max(0, k - 256);
  while (k > floor) {
    const c = text.charCodeAt(k - 1);
    if (isWhitespace(c) || c === 47 || c === 63 || c === 35 || c === 64 || c === 58) break;
    k--;
  }
  return text.startsWith('://', k - 3);
}

function findEmails(text: string, out: PiiMatch[]): void {
  let at = text.indexOf('@');
  while (at !== -1) {
    const next = text.indexOf('@', at + 1);
    let start = at;
    const floor = Math.max(0, at - MAX_LOCAL);
    while (start > floor && isLocalChar(text.charCodeAt(start - 1))) start--;
    const localTooLong = start === floor && floor > 0 && isLocalChar(text.charCodeAt(start - 1));
    let end = at + 1;
    const ceiling = Math.min(text.length, at + 1 + MAX_DOMAIN);
    while (end < ceiling && isDomainChar(text.charCodeAt(end))) end++;
    const domainTooLong = end === ceiling && end < text.length && isDomainChar(text.charCodeAt(end));
    // Sentence punctuation and hyphens are not part of the domain.
    while (end > at + 1 && (text.charCodeAt(end - 1) === 46 || text.charCodeAt(end - 1) === 45)) end--;
    while (start < at && text.charCodeAt(start) === 46) start++;
    const local = text.slice(start, at);
    const domain = text.slice(at + 1, end);
    const after = text.charCodeAt(end);
    const scpTarget = after === 58 && end + 1 < text.length && !isWhitespace(text.charCodeAt(end + 1));
    if (
      !localTooLong &&
      !domainTooLong &&
      validLocal(local) &&
      validDomain(domain) &&
      !NO_REPLY.test(local) &&
      // An underscore after the domain means an identifier goes on.
      !(end < text.length && after === 95) &&
      // `git@github.com:org/repo.git` is an SSH target, not a mailbox.
      !scpTarget &&
      !inUrlUserInfo(text, start)
    ) {
      out.push({ type: 'email', start, end });
    }
    at = next;
  }
}

export const emailDetector: PiiDetector = {
  type: 'email',
  find(text, out) {
    if (text.includes('@')) findEmails(text, out);
  },
};
