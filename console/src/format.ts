/** USD with three significant digits below a cent ($0.0000123), cents above. */
export function usd(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (v === 0) return '$0';
  const abs = Math.abs(v);
  if (abs >= 1000) return `$${v.toLocaleString('en-US', { maximumFractionDigits: 0 })}`;
  if (abs >= 0.01) return `$${v.toFixed(2)}`;
  const digits = Math.min(10, 2 - Math.floor(Math.log10(abs)));
  return `$${v.toFixed(digits)}`;
}

export function int(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : v.toLocaleString('en-US');
}

/** A short count: 1234 -> 1.2k. */
export function compact(v: number): string {
  return v >= 10_000 ? new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 }).format(v) : v.toLocaleString('en-US');
}

export function ms(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(v < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(v / 60_000)} min ${Math.round((v % 60_000) / 1000)} s`;
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString('en-GB', { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** "12 s ago", "3 min ago", else the time. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.round((now - Date.parse(iso)) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return time(iso);
}

/** Share of a limit, 0-1 (over 1 when spent past it); null when there is no limit. */
export function share(spent: number, limit: number | null | undefined): number | null {
  if (limit === null || limit === undefined) return null;
  if (limit === 0) return spent > 0 ? 1.01 : 0;
  return spent / limit;
}

export const startOfUtcDay = (d = new Date()) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
export const startOfUtcMonth = (d = new Date()) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));

/** A usage bucket key (day "2026-01-31", hour "2026-01-31T13" or a timestamp) as Unix seconds. */
export function bucketSeconds(key: string): number | null {
  let iso = key;
  if (/^\d{4}-\d{2}-\d{2}$/.test(key)) iso = `${key}T00:00:00Z`;
  else if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}$/.test(key)) iso = `${key.replace(' ', 'T')}:00:00Z`;
  else if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}$/.test(key)) iso = `${key.replace(' ', 'T')}:00Z`;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : Math.floor(t / 1000);
}
