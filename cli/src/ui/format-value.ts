const SECRET_FIELD = /(^|\.)(api_key|key|secret|token|password)$/i;

/** A value as it appears in a plan line; secrets are masked whatever their value. */
export function formatValue(field: string, value: unknown): string {
  if (value === undefined) return '(none)';
  if (SECRET_FIELD.test(field)) return '(sensitive)';
  return JSON.stringify(value);
}
