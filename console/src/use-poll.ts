import { type DependencyList, useCallback, useEffect, useRef, useState } from 'react';

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** Fetches again now (after an action). */
  refresh(): void;
}

/**
 * Loads `load()` and, when `every` gives a number of milliseconds, again that long after each answer, while the tab is
 * visible. One request at a time; a change of `deps` starts over.
 */
export function usePoll<T>(
  load: () => Promise<T>,
  deps: DependencyList,
  every?: (data: T | undefined) => number | null,
  /** When an answer is the same as the last one, the page is not drawn again. */
  same?: (a: T, b: T) => boolean,
): Polled<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const everyRef = useRef(every);
  everyRef.current = every;
  const sameRef = useRef(same);
  sameRef.current = same;

  // Other deps (another trace, other filters): what was shown belongs to the old ones.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => setState({ loading: true }), deps);

  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let last: T | undefined;
    setState((s) => ({ ...s, loading: true }));
    const run = async () => {
      if (!alive) return;
      if (document.visibilityState === 'hidden') {
        timer = setTimeout(run, 500);
        return;
      }
      try {
        const data = await loadRef.current();
        if (!alive) return;
        const unchanged = last !== undefined && sameRef.current?.(last, data);
        if (!unchanged) {
          last = data;
          setState({ data, loading: false });
        } else setState((s) => (s.loading || s.error ? { data: s.data, loading: false } : s));
      } catch (e) {
        if (!alive) return;
        setState((s) => ({ data: s.data, error: e as Error, loading: false }));
      }
      const ms = everyRef.current?.(last);
      if (alive && ms != null) timer = setTimeout(run, ms);
    };
    void run();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);

  const refresh = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, refresh };
}
