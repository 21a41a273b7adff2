import { AdminApiError, AdminConnectionError } from './admin-client/errors.js';

/** One sentence for people, never a stack trace. */
export function describeError(e: unknown): string {
  let text: string;
  if (e instanceof AdminConnectionError) text = e.message;
  else if (e instanceof AdminApiError && e.status === 401) {
    text = `the gateway refused the admin key (401 ${e.code}): check --admin-key or AGENTGW_ADMIN_KEY`;
  } else if (e instanceof AdminApiError) text = `${stripPeriod(e.message)} (${e.status} ${e.code})`;
  else if (e instanceof Error) text = e.message;
  else text = String(e);
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

function stripPeriod(s: string): string {
  return s.replace(/\.\s*$/, '');
}
