import { createContext, useContext } from 'react';
import type { Api } from './api/client';
import type { Me } from './api/types';

const KEY = 'agentgw.admin_key';

/** The admin key lives in this tab's sessionStorage only: closing the tab signs out. */
export const storedKey = (): string | null => sessionStorage.getItem(KEY);
export const storeKey = (key: string): void => sessionStorage.setItem(KEY, key);
export const forgetKey = (): void => sessionStorage.removeItem(KEY);

export interface Session {
  api: Api;
  me: Me;
  /** tenant_admin and admin keys may act; viewers only look. */
  canWrite: boolean;
  isAdmin: boolean;
  /** Signed in through the OpenID issuer (a session cookie) rather than with an admin key. */
  viaOidc: boolean;
  signOut(): void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in console');
  return s;
}
