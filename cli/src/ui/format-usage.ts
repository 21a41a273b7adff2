/** USD with up to six decimals and no trailing zeros: per-request costs are often fractions of a cent. */
export function usd(n: number): string {
  return `$${n.toFixed(6).replace(/0+$/, '').replace(/\.$/, '')}`;
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
