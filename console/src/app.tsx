import { useCallback, useEffect, useMemo, useState } from 'react';
import { createApi } from './api/client';
import type { Me } from './api/types';
import { Agents } from './pages/agents';
import { Approvals, usePendingCount } from './pages/approvals';
import { Audit } from './pages/audit';
import { Overview } from './pages/overview';
import { Policies } from './pages/policies';
import { SignIn } from './pages/sign-in';
import { System } from './pages/system';
import { TracePage } from './pages/trace';
import { Traces } from './pages/traces';
import { Link, useLocation } from './router';
import { type Session, SessionContext, forgetKey, storeKey, storedKey, useSession } from './session';

const NAV = [
  { to: '', label: 'Overview' },
  { to: '/traces', label: 'Traces' },
  { to: '/approvals', label: 'Approvals' },
  { to: '/agents', label: 'Agents' },
  { to: '/policies', label: 'Policies' },
  { to: '/audit', label: 'Audit' },
  { to: '/system', label: 'System' },
];

/** Why the gateway sent the browser back from a failed OpenID sign-in (`?sign_in_error=`): a fixed sentence per reason. */
const SIGN_IN_ERRORS: Record<string, string> = {
  no_role: 'Your account has no role in this gateway: ask an administrator of your identity provider to add you to a group it maps.',
  issuer_unavailable: 'The identity provider could not be reached or answered wrongly: try again, or tell the gateway operator.',
  refused: 'The sign-in could not be completed (it took too long, was started elsewhere, or the identity provider refused it): try again.',
};

function signInError(): string | undefined {
  const reason = new URLSearchParams(window.location.search).get('sign_in_error');
  if (!reason) return undefined;
  history.replaceState(null, '', window.location.pathname);
  return SIGN_IN_ERRORS[reason] ?? SIGN_IN_ERRORS.refused;
}

/** Read once, when the console loads (and taken off the address bar). */
const SIGN_IN_ERROR = signInError();

export function App() {
  // key null: signed in through the OpenID issuer, with the gateway's session cookie.
  const [auth, setAuth] = useState<{ key: string | null; me: Me } | null>(null);
  const [checking, setChecking] = useState(true);
  const [oidc, setOidc] = useState(false);
  const [notice, setNotice] = useState<string | undefined>(SIGN_IN_ERROR);

  const signOut = useCallback((why?: string, viaOidc = false) => {
    forgetKey();
    setAuth(null);
    setNotice(why);
    if (viaOidc) void fetch('/api/auth/logout', { method: 'POST', credentials: 'same-origin', cache: 'no-store' }).catch(() => undefined);
  }, []);

  // A key kept in this tab from before a reload is checked again before use; else a session cookie from an OIDC sign-in.
  useEffect(() => {
    const key = storedKey();
    const probe = fetch('/api/auth/session', { credentials: 'same-origin', cache: 'no-store' })
      .then((r) => (r.ok ? (r.json() as Promise<{ oidc: boolean; signed_in: boolean }>) : { oidc: false, signed_in: false }))
      .catch(() => ({ oidc: false, signed_in: false }));
    void (async () => {
      const info = await probe;
      setOidc(info.oidc);
      if (key) {
        await createApi(key, () => undefined)
          .get<Me>('/me')
          .then((me) => setAuth({ key, me }))
          .catch(() => signOut('Your session ended: sign in again.'));
      } else if (info.signed_in) {
        await createApi(null, () => undefined)
          .get<Me>('/me')
          .then((me) => setAuth({ key: null, me }))
          .catch(() => signOut('Your session ended: sign in again.'));
      }
      setChecking(false);
    })();
  }, [signOut]);

  const session = useMemo<Session | null>(() => {
    if (!auth) return null;
    const viaOidc = auth.key === null;
    return {
      api: createApi(auth.key, () =>
        signOut(viaOidc ? 'Your console session ended (expired or signed out): sign in again.' : 'The admin key stopped working (deleted?): sign in again.', viaOidc),
      ),
      me: auth.me,
      canWrite: auth.me.role !== 'viewer',
      isAdmin: auth.me.role === 'admin',
      viaOidc,
      signOut: () => signOut(undefined, viaOidc),
    };
  }, [auth, signOut]);

  if (checking) return <p className="muted boot">Loading…</p>;
  if (!session) {
    return (
      <SignIn
        notice={notice}
        oidc={oidc}
        onSignedIn={(key, me) => {
          storeKey(key);
          setNotice(undefined);
          setAuth({ key, me });
        }}
      />
    );
  }
  return (
    <SessionContext.Provider value={session}>
      <Shell />
    </SessionContext.Provider>
  );
}

function Shell() {
  const loc = useLocation();
  const s = useSession();
  const pending = usePendingCount();
  return (
    <div className="shell">
      <header className="topbar">
        <Link to="" className="brand">
          <img src="/ui/favicon.svg" alt="" width={24} height={24} />
          <span>agentgw</span>
        </Link>
        <nav className="nav" aria-label="Console">
          {NAV.map((n) => {
            const active = n.to === '' ? loc.path === '' : loc.path === n.to || (n.to === '/traces' && loc.path === '/trace');
            return (
              <Link key={n.to} to={n.to} className={active ? 'nav-link active' : 'nav-link'}>
                {n.label}
                {n.to === '/approvals' && pending !== null && pending !== '0' && (
                  <span className="nav-count" data-testid="pending-count" title={`${pending} tool calls waiting for a decision`}>
                    {pending}
                  </span>
                )}
              </Link>
            );
          })}
        </nav>
        <div className="whoami" data-testid="whoami">
          <span className="whoami-name">{s.me.name}</span>
          <span className={`role role-${s.me.role}`}>{s.me.role.replace('_', ' ')}</span>
          {s.me.tenant_id && <span className="tenant-chip">tenant {s.me.tenant_id}</span>}
          <button type="button" className="link-button" onClick={s.signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main className="content">
        <Page path={loc.path} query={loc.query} />
      </main>
    </div>
  );
}

function Page(props: { path: string; query: URLSearchParams }) {
  switch (props.path) {
    case '':
      return <Overview />;
    case '/traces':
      return <Traces />;
    case '/trace':
      return <TracePage id={props.query.get('id') ?? ''} tenant={props.query.get('tenant') ?? undefined} />;
    case '/approvals':
      return <Approvals />;
    case '/agents':
      return <Agents focus={props.query.get('agent') ?? undefined} />;
    case '/policies':
      return <Policies />;
    case '/audit':
      return <Audit />;
    case '/system':
      return <System />;
    default:
      return (
        <div className="card">
          <h1>Not found</h1>
          <p>
            The console has no page <code>/ui{props.path}</code>. <Link to="">Go to the overview</Link>.
          </p>
        </div>
      );
  }
}
