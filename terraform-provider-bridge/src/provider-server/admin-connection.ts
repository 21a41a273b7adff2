import { AdminClient } from '@agentgw/cli';
import { ADMIN_KEY_ENV, ADMIN_URL_ENV } from '../schema/resource-specs.js';
import { isUnknown, type TfObject } from './dynamic-value.js';
import { errorDiagnostic, type Diagnostic } from './diagnostics.js';

/** The same default as the agentgw CLI: the server's default listener. */
export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8080/api';

/** The admin client from the provider block, then AGENTGW_ADMIN_URL / AGENTGW_ADMIN_KEY, as the CLI resolves them. */
export function connectAdmin(
  config: TfObject | null,
  env: NodeJS.ProcessEnv = process.env,
): { client?: AdminClient; diagnostics: Diagnostic[] } {
  if (isUnknown(config?.admin_url) || isUnknown(config?.admin_key)) {
    return {
      diagnostics: [errorDiagnostic('Provider configuration unknown', 'admin_url and admin_key must be known at plan time: do not derive them from resources.')],
    };
  }
  const raw = (config?.admin_url as string | null) ?? env[ADMIN_URL_ENV] ?? DEFAULT_ADMIN_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { diagnostics: [errorDiagnostic('Invalid admin_url', `"${raw}" is not a URL: use one such as ${DEFAULT_ADMIN_URL}.`, ['admin_url'])] };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { diagnostics: [errorDiagnostic('Invalid admin_url', `"${raw}" must start with http:// or https://.`, ['admin_url'])] };
  }
  // A bare host means the admin interface at its standard path.
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/api';
  const adminKey = (config?.admin_key as string | null) ?? env[ADMIN_KEY_ENV];
  if (!adminKey) {
    return {
      diagnostics: [errorDiagnostic('No admin key', `Set admin_key in the provider block or the ${ADMIN_KEY_ENV} environment variable.`, ['admin_key'])],
    };
  }
  return { client: new AdminClient({ baseUrl: url.toString().replace(/\/+$/, ''), adminKey }), diagnostics: [] };
}
