import type { PiiDetector, PiiMatch } from '../pii-match.js';
import { isAsciiDigit, isWordChar } from './chars.js';
import { ipv4HostBitsZero, ipv6HostBitsZero, isPersonalIpv4, isPersonalIpv6 } from './ip-ranges.js';

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
// Not glued to a word or a longer dotted number (`v1.2.3.4`, `1.2.3.4.5`, OIDs); leading zeros are rejected.
const IPV4 = new RegExp(`(?<![\\w.])(?:${OCTET}\\.){3}${OCTET}(?!\\w|\\.\\d)`, 'g');

/**
 * A dotted quad right after a version or section word is a version or section number, not an address.
 * This fails open for text such as "version 10.0.0.1" on purpose: real addresses are not written that way.
 */
const VERSION_CONTEXT = /(?:\bv|\bver\.?|version|versión|versao|versão|release|build|firmware|firmwareversion|section|chapter|abschnitt|kapitel|§|バージョン)(?:\s*[:=]?\s*|-)$/i;

/**
 * What follows shows another kind of thing: a prefix length under which every host bit is zero (`10.1.0.0/16`,
 * `2001:470::/32`: a network, while `81.2.69.142/24` is a host with its mask), a version suffix (`1.2.3.4-rc.1`), a
 * name (`42.2.0.192.in-addr.arpa`).
 */
function notAHost(text: string, end: number, hostBitsZero: (prefix: number) => boolean): boolean {
  const after = text.slice(end, end + 5);
  const cidr = /^\/(\d{1,3})(?!\d)/.exec(after);
  if (cidr) return hostBitsZero(Number(cidr[1]));
  return /^[-.][A-Za-z]/.test(after);
}

function findIpv4(text: string, out: PiiMatch[]): void {
  IPV4.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = IPV4.exec(text)) !== null) {
    const before = text.slice(Math.max(0, m.index - 24), m.index);
    const address = m[0];
    if (VERSION_CONTEXT.test(before) || !isPersonalIpv4(address)) continue;
    if (notAHost(text, m.index + address.length, (prefix) => ipv4HostBitsZero(address, prefix))) continue;
    out.push({ type: 'ip_address', start: m.index, end: m.index + m[0].length });
  }
}

const MAYBE_IPV4 = /\d\.\d{1,3}\.\d/;
// Two colons with at most four hex digits between them, as every IPv6 address has.
const MAYBE_IPV6 = /:[0-9A-Fa-f]{0,4}:/;

function isHex(c: number): boolean {
  return isAsciiDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

function isIpv6Char(c: number): boolean {
  return isHex(c) || c === 58 || c === 46;
}

function validHexGroups(part: string, allowIpv4Tail: boolean): number {
  if (part === '') return 0;
  const groups = part.split(':');
  let count = 0;
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i];
    if (allowIpv4Tail && i === groups.length - 1 && g.includes('.')) {
      if (!/^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(g)) return -1;
      count += 2;
    } else if (/^[0-9A-Fa-f]{1,4}$/.test(g)) {
      count += 1;
    } else {
      return -1;
    }
  }
  return count;
}

/** Full and `::`-compressed forms; requires a digit and two groups so that `a::b` in code and `::1` do not count. */
export function isIpv6(s: string): boolean {
  if (s.includes(':::')) return false;
  if (!/\d/.test(s)) return false;
  const halves = s.split('::');
  if (halves.length > 2) return false;
  if (halves.length === 1) return validHexGroups(s, true) === 8;
  const head = validHexGroups(halves[0], false);
  const tail = validHexGroups(halves[1], true);
  if (head < 0 || tail < 0) return false;
  const total = head + tail;
  return total >= 2 && total <= 7;
}

function findIpv6(text: string, out: PiiMatch[]): void {
  let colon = text.indexOf(':');
  while (colon !== -1) {
    let start = colon;
    while (start > 0 && isIpv6Char(text.charCodeAt(start - 1))) start--;
    let end = colon;
    while (end < text.length && isIpv6Char(text.charCodeAt(end))) end++;
    // Every run is looked at once: the next search starts after it.
    colon = text.indexOf(':', end);
    const prev = start > 0 ? text.charCodeAt(start - 1) : -1;
    const next = end < text.length ? text.charCodeAt(end) : -1;
    if (isWordChar(prev) || isWordChar(next)) continue;
    let s = start;
    let e = end;
    // Sentence punctuation after an address: "at fe80::1." or "fe80::1:".
    while (e > s && text.charCodeAt(e - 1) === 46) e--;
    if (e - s > 2 && text.charCodeAt(e - 1) === 58 && text.charCodeAt(e - 2) !== 58) e--;
    if (text.charCodeAt(s) === 46) continue;
    if (e - s > 45) continue;
    const candidate = text.slice(s, e);
    if (isIpv6(candidate) && isPersonalIpv6(candidate) && !notAHost(text, e, (prefix) => ipv6HostBitsZero(candidate, prefix))) out.push({ type: 'ip_address', start: s, end: e });
  }
}

export const ipAddressDetector: PiiDetector = {
  type: 'ip_address',
  find(text, out) {
    if (MAYBE_IPV4.test(text)) findIpv4(text, out);
    if (MAYBE_IPV6.test(text)) findIpv6(text, out);
  },
};
