import { describe, expect, it } from 'vitest';
import {
  dayKeyEnd,
  daysInUtcMonth,
  effectiveDailyLimit,
  monthKeyEnd,
  nextUtcDayStart,
  nextUtcMonthStart,
  utcDayKey,
  utcMonthKey,
} from './budget-window.js';

const at = (iso: string) => new Date(iso);

describe('UTC budget windows', () => {
  it('names the UTC day and month, whatever the local zone', () => {
    expect(utcDayKey(at('2025-03-09T23:59:59.999Z'))).toBe('2025-03-09');
    expect(utcDayKey(at('2025-03-10T01:00:00+02:00'))).toBe('2025-03-09');
    expect(utcMonthKey(at('2025-12-31T23:59:59Z'))).toBe('2025-12');
  });

  it('resets at the next UTC midnight and the first of the next month', () => {
    expect(nextUtcDayStart(at('2025-01-31T23:59:59Z')).toISOString()).toBe('2025-02-01T00:00:00.000Z');
    expect(nextUtcDayStart(at('2025-02-01T00:00:00Z')).toISOString()).toBe('2025-02-02T00:00:00.000Z');
    expect(nextUtcMonthStart(at('2025-12-15T12:00:00Z')).toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(nextUtcMonthStart(at('2024-02-29T00:00:00Z')).toISOString()).toBe('2024-03-01T00:00:00.000Z');
    expect(dayKeyEnd('2024-02-29')).toBe(Date.parse('2024-03-01T00:00:00Z'));
    expect(monthKeyEnd('2025-12')).toBe(Date.parse('2026-01-01T00:00:00Z'));
  });

  it('counts days in the month', () => {
    expect(daysInUtcMonth(at('2024-02-10T00:00:00Z'))).toBe(29);
    expect(daysInUtcMonth(at('2025-02-10T00:00:00Z'))).toBe(28);
    expect(daysInUtcMonth(at('2025-04-30T23:00:00Z'))).toBe(30);
    expect(daysInUtcMonth(at('2025-01-01T00:00:00Z'))).toBe(31);
  });

  it('derives the daily limit from the monthly budget when no daily budget is set', () => {
    const feb = at('2025-02-10T00:00:00Z');
    expect(effectiveDailyLimit({ daily_budget: 5, monthly_budget: 280 }, feb)).toBe(5);
    expect(effectiveDailyLimit({ daily_budget: null, monthly_budget: 280 }, feb)).toBe(10);
    expect(effectiveDailyLimit({ daily_budget: null, monthly_budget: 310 }, at('2025-03-01T00:00:00Z'))).toBe(10);
    expect(effectiveDailyLimit({ daily_budget: 0, monthly_budget: 280 }, feb)).toBe(0);
    expect(effectiveDailyLimit({ daily_budget: null, monthly_budget: null }, feb)).toBeNull();
  });
});
