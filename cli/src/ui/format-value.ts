const SECRET_FIELD = /(^|\.)(api_key|key|secret|token|password)$/i;

/** A value as it appears in a plan line; secrets are masked whatever their value. */
export function formatValue(field: string, value: unknown): string {
  if (value === undefined) return '(none)';
  if (SECRET_FIELD.test(field)) return '(sensitive)';
  if (field === 'targets' && isTargetList(value)) return value.map(targetText).join(', ');
  return JSON.stringify(value);
}

interface TargetValue {
  model: string;
  weight?: number;
  priority?: number;
  rpm?: number | null;
  tpm?: number | null;
}

function isTargetList(v: unknown): v is TargetValue[] {
  return Array.isArray(v) && v.length > 0 && v.every((t) => typeof t === 'object' && t !== null && typeof (t as TargetValue).model === 'string');
}

/** A route target as `provider/model (weight 3, rpm 60)`: only the settings that differ from their defaults. */
function targetText(t: TargetValue): string {
  const settings = [
    t.weight !== undefined && t.weight !== 1 ? `weight ${t.weight}` : null,
    t.priority !== undefined && t.priority !== 0 ? `priority ${t.priority}` : null,
    t.rpm != null ? `rpm ${t.rpm}` : null,
    t.tpm != null ? `tpm ${t.tpm}` : null,
  ].filter((s) => s !== null);
  return settings.length > 0 ? `${t.model} (${settings.join(', ')})` : t.model;
}
