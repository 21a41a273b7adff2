import { type FormEvent, useState } from 'react';
import { ApiError, createApi } from '../api/client';
import type { Me } from '../api/types';

/** Asks for an admin key and checks it with GET /api/me before keeping it. */
export function SignIn(props: { onSignedIn(key: string, me: Me): void; notice?: string; oidc?: boolean }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) return;
    setBusy(true);
    setError(null);
    try {
      const me = await createApi(k, () => undefined).get<Me>('/me');
      props.onSignedIn(k, me);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'That admin key is unknown or was deleted.' : (err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in">
      <form className="card sign-in-card" onSubmit={submit}>
        <div className="brand brand-large">
          <img src="/ui/favicon.svg" alt="" width={32} height={32} />
          <span>agentgw</span>
        </div>
        <h1>Sign in to the console</h1>
        <p className="muted">
          Paste an admin key. It stays in this browser tab only (sessionStorage) and is sent to this gateway's <code>/api</code>, nowhere
          else.
        </p>
        {props.notice && <p className="notice">{props.notice}</p>}
        {props.oidc && (
          <>
            {/* A full navigation: the gateway sends the browser to the identity provider and back (code + PKCE). */}
            <a className="button primary sso-button" href="/api/auth/oidc/login">
              Sign in with your identity provider
            </a>
            <p className="muted small">Or, for small installs, with an admin key:</p>
          </>
        )}
        <label htmlFor="admin-key">Admin key</label>
        <input
          id="admin-key"
          name="admin-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={key}
          onChange={(e) => setKey(e.target.value)}
          placeholder="adk_…"
          autoFocus
        />
        {error && (
          <p className="error-note" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className={props.oidc ? undefined : 'primary'} disabled={busy || !key.trim()}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
