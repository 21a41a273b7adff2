/**
 * rules.pii_allow: values and globs never treated as PII ("noreply@*", "*@example.com", "127.0.0.1"). A match is
 * allowed when its text, or its text without spaces and the punctuation of numbers (`+1 415-555-2671` as
 * `+14155552671`, an IBAN in groups of four as one word), equals a value or fits a glob, letter case aside.
 */
export interface PiiAllow {
  /** The same key for the same list: part of the key under which clean texts are remembered. */
  readonly key: string;
  allows(value: string): boolean;
}

export const ALLOW_NOTHING: PiiAllow = { key: '', allows: () => false };

const GLOB_CHARS = /[*?]/;

function globSource(glob: string): string {
  let out = '';
  for (const ch of glob) out += ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\/-]/g, '\\$&');
  return out;
}

/** Spaces, dashes, dots, slashes and parentheses, as numbers are printed. */
const NUMBER_PUNCTUATION = /[\s\-.()/\u00a0\u2010-\u2015]/g;

const compiled = new Map<string, PiiAllow>();

/** The allow-list of some patterns, compiled once per distinct list. */
export function compileAllow(patterns: readonly string[]): PiiAllow {
  if (patterns.length === 0) return ALLOW_NOTHING;
  const key = [...new Set(patterns.map((p) => p.toLowerCase()))].sort().join('\n');
  let allow = compiled.get(key);
  if (allow) return allow;
  const literals = new Set<string>();
  const globs: string[] = [];
  for (const p of key.split('\n')) (GLOB_CHARS.test(p) ? globs.push(globSource(p)) : literals.add(p));
  const glob = globs.length > 0 ? new RegExp(`^(?:${globs.join('|')})$`, 'is') : undefined;
  const fits = (v: string) => literals.has(v) || (glob !== undefined && glob.test(v));
  allow = {
    key,
    allows(value) {
      const v = value.toLowerCase();
      if (fits(v)) return true;
      const compact = v.replace(NUMBER_PUNCTUATION, '');
      return compact !== v && fits(compact);
    },
  };
  // Policies are few; a bound keeps a stream of distinct lists from growing the map without end.
  if (compiled.size > 1000) compiled.clear();
  compiled.set(key, allow);
  return allow;
}

/** Allowed only where every list allows: several policies apply to one request, and each must pass. */
export function allowedByAll(lists: readonly PiiAllow[]): PiiAllow {
  const real = lists.filter((l) => l !== ALLOW_NOTHING);
  if (real.length < lists.length || real.length === 0) return ALLOW_NOTHING;
  if (real.length === 1 || real.every((l) => l.key === real[0].key)) return real[0];
  return { key: real.map((l) => l.key).join('\n&\n'), allows: (v) => real.every((l) => l.allows(v)) };
}
