/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const n = [...s].length;
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / n;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** How many of lower-case, upper-case, digit and other characters occur. */
export function charClassCount(s: string): number {
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let other = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
    else other = 1;
  }
  return lower + upper + digit + other;
}

/** A token that looks generated rather than typed: mixed character classes and enough entropy for its length. */
export function looksRandom(s: string, minLength: number): boolean {
  if (s.length < minLength) return false;
  if (charClassCount(s) < 2) return false;
  return shannonEntropy(s) >= Math.min(3.0, Math.log2(s.length) * 0.85);
}
