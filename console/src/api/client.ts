import type { Page } from './types';

/** An error answer of the admin interface (CONTRACT's error body). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Api {
  get<T>(path: string): Promise<T>;
  send<T>(method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** Every page of a list, up to `max` items. */
  all<T>(path: string, max?: number): Promise<T[]>;
}

/** The CSRF token of the console session (a cookie the gateway sets beside the HttpOnly session cookie). */
function csrfToken(): string {
  const m = /(?:^|;\s*)agentgw_csrf=([^;]*)/.exec(document.cookie);
  return m ? m[1]! : '';
}

/**
 * The console's only way to the gateway: same origin, /api, and either the admin key as Bearer (and no cookie), or, with
 * `adminKey` null, the session cookie of an OpenID Connect sign-in plus its CSRF token on writes.
 */
export function createApi(adminKey: string | null, onUnauthorized: () => void): Api {
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (adminKey !== null) headers.authorization = `Bearer ${adminKey}`;
    else if (method !== 'GET') headers['x-csrf-token'] = csrfToken();
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`/api${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: adminKey !== null ? 'omit' : 'same-origin',
      referrerPolicy: 'no-referrer',
    });
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON: reported below with the status.
    }
    if (!res.ok) {
      const err = (json as { error?: { code?: string; message?: string } } | null)?.error;
      if (res.status === 401) onUnauthorized();
      throw new ApiError(res.status, err?.code ?? `http_${res.status}`, err?.message ?? `${method} /api${path} answered ${res.status}.`);
    }
    return json as T;
  }
  return {
    get: (path) => call('GET', path),
    send: (method, path, body) => call(method, path, body),
    async all<T>(path: string, max = 2000): Promise<T[]> {
      const out: T[] = [];
      let cursor: string | null = null;
      do {
        const sep = path.includes('?') ? '&' : '?';
        const page: Page<T> = await call('GET', `${path}${sep}limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        out.push(...page.data);
        cursor = page.next_cursor;
      } while (cursor && out.length < max);
      return out;
    },
  };
}

/** A query string from the defined values only. */
export function query(params: Record<string, string | number | undefined | null | false>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== false && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
