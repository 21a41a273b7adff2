import metadata from 'libphonenumber-js/metadata.max.json';
import { patternStarts } from './phone-pattern-prefixes.js';

/**
 * Whether some region libphonenumber-js knows has a valid national number written this way: with its trunk prefix
 * ('0' in most of the world, '1' in North America, '8' in Russia) or without. Valid means what libphonenumber-js's
 * `isValid()` means: the national significant number matches one of the region's number types (fixed line, mobile,
 * toll free, ...) at one of that type's lengths.
 *
 * Asking libphonenumber-js region by region costs about 0.3 ms a number, as most regions' general pattern accepts it;
 * here a number is tested only against the type patterns, of its length, that can start with its first three digits.
 * A region's entry of the metadata reads `[callingCode, iddPrefix, nationalNumberPattern, possibleLengths, formats,
 * nationalPrefix, ..., types]`, each type `[pattern, possibleLengths?]`.
 */

interface RegionPlan {
  trunk: string;
  types: Array<{ pattern: string; lengths: readonly number[] }>;
}

function regionPlans(): RegionPlan[] {
  const countries = (metadata as unknown as { countries: Record<string, unknown[]> }).countries;
  const plans: RegionPlan[] = [];
  for (const plan of Object.values(countries)) {
    const general = Array.isArray(plan[3]) ? (plan[3] as number[]) : [];
    const types: RegionPlan['types'] = [];
    if (Array.isArray(plan[11])) {
      for (const t of plan[11] as unknown[]) {
        if (!Array.isArray(t) || typeof t[0] !== 'string') continue;
        types.push({ pattern: t[0], lengths: Array.isArray(t[1]) ? (t[1] as number[]) : general });
      }
    } else if (typeof plan[2] === 'string') {
      // A region without number types is validated by its general pattern, as libphonenumber-js does.
      types.push({ pattern: plan[2], lengths: general });
    }
    plans.push({ trunk: typeof plan[5] === 'string' ? plan[5] : '', types });
  }
  return plans;
}

const PLANS = regionPlans();
/** The distinct trunk prefixes, longest first. */
const TRUNKS = [...new Set(PLANS.map((p) => p.trunk).filter((t) => t !== ''))].sort((a, b) => b.length - a.length);

/** A number is tested against the patterns that can start with its first three digits. */
const PREFIX_DIGITS = 3;

/**
 * A type pattern, and the digits its numbers can start with: the first digit is worked out when a table that holds the
 * pattern is built, the first three when a number with that first digit first meets it (so the first lookups stay cheap).
 */
class TypePattern {
  private readonly first: Uint8Array;
  private starts: Uint8Array | undefined;
  private readonly re: RegExp;

  constructor(private readonly source: string) {
    this.re = new RegExp(`^(?:${source})$`);
    this.first = patternStarts(source, 1);
  }

  matches(nsn: string): boolean {
    if (!this.first[nsn.charCodeAt(0) - 48]) return false;
    this.starts ??= patternStarts(this.source, PREFIX_DIGITS);
    return this.starts[Number(nsn.slice(0, PREFIX_DIGITS))] === 1 && this.re.test(nsn);
  }
}

const compiled = new Map<string, TypePattern>();

function compile(pattern: string): TypePattern {
  let c = compiled.get(pattern);
  if (!c) compiled.set(pattern, (c = new TypePattern(pattern)));
  return c;
}

const buckets = new Map<string, TypePattern[]>();

/** The type patterns, at `length`, of the regions whose trunk prefix is `trunk` ('': of every region). */
function bucketFor(trunk: string, length: number): TypePattern[] {
  const key = `${trunk}|${length}`;
  let bucket = buckets.get(key);
  if (bucket === undefined) {
    const seen = new Set<string>();
    bucket = [];
    for (const plan of PLANS) {
      if (trunk !== '' && plan.trunk !== trunk) continue;
      for (const t of plan.types) {
        if (!t.lengths.includes(length) || seen.has(t.pattern)) continue;
        seen.add(t.pattern);
        bucket.push(compile(t.pattern));
      }
    }
    buckets.set(key, bucket);
  }
  return bucket;
}

function matches(trunk: string, nsn: string): boolean {
  for (const t of bucketFor(trunk, nsn.length)) if (t.matches(nsn)) return true;
  return false;
}

/** `digits` (as dialled within a country, no `+`) is a valid national number of some region. */
export function isNationalNumberSomewhere(digits: string): boolean {
  if (matches('', digits)) return true;
  for (const trunk of TRUNKS) {
    if (digits.length > trunk.length + PREFIX_DIGITS && digits.startsWith(trunk) && matches(trunk, digits.slice(trunk.length))) {
      return true;
    }
  }
  return false;
}
