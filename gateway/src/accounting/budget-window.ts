/** Calendar-aligned UTC budget windows: a day runs 00:00-24:00 UTC, a month from the 1st 00:00 UTC. */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

// The day of the last call, remembered: every request asks for it, and it changes once a day.
let dayFrom = 0;
let dayTo = -1;
let lastDayKey = '';

/** `YYYY-MM-DD` of the UTC day containing `now`. */
export function utcDayKey(now: Date): string {
  const t = now.getTime();
  if (t >= dayFrom && t < dayTo) return lastDayKey;
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  const key = `${pad(y, 4)}-${pad(m + 1)}-${pad(d)}`;
  if (Number.isFinite(t)) {
    dayFrom = Date.UTC(y, m, d);
    dayTo = Date.UTC(y, m, d + 1);
    lastDayKey = key;
  }
  return key;
}

/** `YYYY-MM` of the UTC month containing `now`. */
export function utcMonthKey(now: Date): string {
  return `${pad(now.getUTCFullYear(), 4)}-${pad(now.getUTCMonth() + 1)}`;
}

/** The month key of a day key (`2025-03-14` -> `2025-03`). */
export function monthKeyOfDay(dayKey: string): string {
  return dayKey.slice(0, 7);
}

/** Start of the next UTC day: when the daily budget resets. */
export function nextUtcDayStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

/** Start of the next UTC month: when the monthly budget resets. */
export function nextUtcMonthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/** Number of days in the UTC month containing `now` (28-31). */
export function daysInUtcMonth(now: Date): number {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
}

const keyEnds = new Map<string, number>();

function remembered(key: string, compute: () => number): number {
  let end = keyEnds.get(key);
  if (end === undefined) {
    end = compute();
    if (keyEnds.size >= 1000) keyEnds.clear();
    keyEnds.set(key, end);
  }
  return end;
}

/** End (exclusive, epoch ms) of the window a day key names. */
export function dayKeyEnd(dayKey: string): number {
  return remembered(dayKey, () => {
    const [y, m, d] = dayKey.split('-').map(Number);
    return Date.UTC(y!, m! - 1, d! + 1);
  });
}

/** End (exclusive, epoch ms) of the window a month key names. */
export function monthKeyEnd(monthKey: string): number {
  return remembered(monthKey, () => {
    const [y, m] = monthKey.split('-').map(Number);
    return Date.UTC(y!, m!, 1);
  });
}

export interface BudgetFields {
  daily_budget: number | null;
  monthly_budget: number | null;
}

/**
 * The daily limit in USD: daily_budget, or monthly_budget spread evenly over the days of the current
 * month when only a monthly budget is set; null when neither is set (unlimited).
 */
export function effectiveDailyLimit(policy: BudgetFields, now: Date): number | null {
  if (policy.daily_budget !== null) return policy.daily_budget;
  if (policy.monthly_budget !== null) return policy.monthly_budget / daysInUtcMonth(now);
  return null;
}
