/**
 * USD as the console and the CLI both write it (cli/src/ui/format-usage.ts has the same code; a test holds them equal):
 * two decimals from a dollar up ($1,234.56), and below a dollar four significant digits with at least two decimals,
 * so a per-request cost of a fraction of a cent keeps its digits ($0.000112, $0.02346, $0.50).
 */
export function formatUsd(v: number): string {
  if (v === 0) return '$0.00';
  const sign = v < 0 ? '-' : '';
  const abs = Math.abs(v);
  if (abs >= 1) return `${sign}$${abs.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  const digits = Math.min(10, Math.max(2, 3 - Math.floor(Math.log10(abs))));
  let text = abs.toFixed(digits).replace(/0+$/, '');
  const decimals = text.length - text.indexOf('.') - 1;
  if (decimals < 2) text = abs.toFixed(2);
  return `${sign}$${text}`;
}

export function usd(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : formatUsd(v);
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

/** A moment in the browser's time zone, named ("25 Nov, 16:14:14 UTC", "25 Nov, 17:14:14 CET"). */
export function time(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString('en-GB', { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
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
