/** Aborts on SIGINT or SIGTERM, so a long-running command can finish its output and exit 0 instead of being killed. */
export function stopOnSignals(signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM']): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  for (const s of signals) process.once(s, stop);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const s of signals) process.off(s, stop);
    },
  };
}
