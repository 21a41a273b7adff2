/**
 * USD as the console and the CLI both write it (console/src/format.ts has the same code; a test holds them equal):
 * two decimals from a dollar up ($1,234.56), and below a dollar four significant digits with at least two decimals,
 * so a per-request cost of a fraction of a cent keeps its digits ($0.000112, $0.02346, $0.50).
 */
export function usd(v: number): string {
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

/** A duration people read at a glance: 350ms, 2.35s, 3m05s. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

export function tokenPair(prompt: number, completion: number): string {
  return `${prompt}/${completion}`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
