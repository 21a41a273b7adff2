import { AdminClient } from '../admin-client/admin-client.js';
import { CliError } from '../errors.js';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8080/api';

export interface ConnectionOptions {
  adminUrl?: string;
  adminKey?: string;
}

/** The admin base address from --admin-url, AGENTGW_ADMIN_URL or the default listener; a bare host gets `/api`. */
export function resolveAdminUrl(opts: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): string {
  const raw = opts.adminUrl ?? env.AGENTGW_ADMIN_URL ?? DEFAULT_ADMIN_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`the admin URL "${raw}" is not a URL: pass one such as --admin-url ${DEFAULT_ADMIN_URL}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`the admin URL "${raw}" must start with http:// or https://`);
  }
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/api';
  return url.toString().replace(/\/+$/, '');
}

/** An admin client from flags first, then AGENTGW_ADMIN_URL / AGENTGW_ADMIN_KEY. */
export function connect(opts: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): AdminClient {
  const baseUrl = resolveAdminUrl(opts, env);
  const adminKey = opts.adminKey ?? env.AGENTGW_ADMIN_KEY;
  if (!adminKey) throw new CliError('no admin key: pass --admin-key or set AGENTGW_ADMIN_KEY');
  return new AdminClient({ baseUrl, adminKey });
}
