import { isDeepStrictEqual } from 'node:util';
import type { TfValue } from '../dynamic-value.js';

/**
 * A server value as state: where the configuration left the attribute unset (prior null) and the server holds
 * the default, the state keeps null, so that filled-in defaults never show as drift; anything else is real drift.
 */
export function unsetIfDefault(server: unknown, fallback: unknown, prior: TfValue | undefined): TfValue {
  if ((prior === null || prior === undefined) && isDeepStrictEqual(server ?? null, fallback)) return null;
  return (server ?? null) as TfValue;
}

export function asObject(value: TfValue | undefined): Record<string, TfValue> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, TfValue>) : null;
}

export function asString(value: TfValue | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
