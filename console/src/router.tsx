import { type MouseEvent, type ReactNode, useEffect, useState } from 'react';

export const BASE = '/ui';

export interface Location {
  /** The path under /ui, without a trailing slash: '' for the overview, '/traces', ... */
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  const path = window.location.pathname.replace(/^\/ui/, '').replace(/\/+$/, '');
  return { path, query: new URLSearchParams(window.location.search) };
}

const listeners = new Set<() => void>();

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = `${BASE}${to}`;
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const l of listeners) l();
  if (!opts.replace) window.scrollTo(0, 0);
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return loc;
}

/** A link inside the console: a real href (open in a new tab works), client-side navigation on a plain click. */
export function Link(props: { to: string; className?: string; children: ReactNode; title?: string }) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.to);
  };
  return (
    <a href={`${BASE}${props.to}`} className={props.className} title={props.title} onClick={onClick}>
      {props.children}
    </a>
  );
}
