/**
 * Counters add integers of 1e-10 USD, the resolution costs are rounded to: integer sums are exact (up to 2^53 units,
 * about $900,000 per window; beyond that still within 1e-10 USD per operation), so 50 x $0.01 is exactly $0.50.
 */
export const UNITS_PER_USD = 1e10;

/** An amount in USD as counter units; throws on negative or non-finite amounts, which would corrupt every later check. */
export function toUnits(usd: number): number {
  if (!Number.isFinite(usd) || usd < 0) throw new RangeError(`amount must be a finite number >= 0, got ${usd}`);
  return Math.round(usd * UNITS_PER_USD);
}

/** A limit in USD as counter units; null stays null (unlimited). */
export function limitToUnits(limit: number | null): number | null {
  return limit === null ? null : toUnits(limit);
}

export function fromUnits(units: number): number {
  return units / UNITS_PER_USD;
}

/** Windows are kept this long after they end, so a late settle still finds its window. */
export const WINDOW_GRACE_MS = 25 * 60 * 60_000;
