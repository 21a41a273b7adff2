import type { Labels } from '@agentgw/gateway/contract';
import { CliError } from '../errors.js';

/** `--label team=support --label tier=gold` */
export function parseLabels(values: string[] | undefined): Labels | undefined {
  if (!values || values.length === 0) return undefined;
  const out: Labels = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0) throw new CliError(`--label "${v}" must be KEY=VALUE, e.g. --label team=support`);
    out[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return out;
}

/** A number flag; "null" or "none" clears the field. */
export function parseNullableNumber(flag: string, value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'null' || value === 'none') return null;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new CliError(`${flag} must be a number (or "none" to clear it), not "${value}"`);
  return n;
}

/** A comma-separated list flag; "none" is the empty list. */
export function parseList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  if (value === 'none' || value === '') return [];
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

interface SafeParser<T> {
  safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

/** Checks a request body with the contract's schema before sending, so a mistake reads as a flag problem. */
export function checkBody<T>(schema: SafeParser<T>, body: unknown, what: string): T {
  const res = schema.safeParse(body);
  if (res.success) return res.data;
  const issue = res.error.issues[0];
  const field = issue.path.map(String).join('.');
  throw new CliError(`invalid ${what}: ${field ? `${field}: ` : ''}${issue.message}`);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** A time flag, checked here so the mistake reads as a flag problem rather than a server refusal. */
export function parseTime(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!RFC3339.test(value) || !Number.isFinite(Date.parse(value))) {
    throw new CliError(`${flag} must be an RFC 3339 time such as 2026-01-31T00:00:00Z, not "${value}"`);
  }
  return value;
}

/** A whole number within bounds. */
export function parseInteger(flag: string, value: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max) {
    throw new CliError(`${flag} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}, not "${value}"`);
  }
  return n;
}

/** Seconds as a flag, milliseconds for the code. */
export function parseSeconds(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback * 1000;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new CliError(`${flag} must be a number of seconds above 0, such as 2 or 0.5, not "${value}"`);
  return Math.round(n * 1000);
}
