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
