import { adminApi } from './admin-api.js';

/** Setup helpers over `adminApi` for data-plane tests: they throw on an unexpected status and return the body. */
export function adminClient(adminUrl: string, adminKey: string) {
  const api = adminApi(adminUrl, adminKey);
  async function call(method: string, path: string, body?: unknown, expect?: number): Promise<any> {
    const res = await api(method, path, { body });
    if (expect !== undefined ? res.status !== expect : res.status >= 400) {
      throw new Error(`${method} ${path} -> ${res.status}: ${res.text}`);
    }
    return res.body ?? null;
  }
  return {
    call,
    tenant: (id: string) => call('POST', '/tenants', { id, name: id }),
    policy: (id: string, body: Record<string, unknown>) => call('PUT', `/policies/${id}`, body),
    /** Creates an agent and returns it with its one-time key. */
    agent: (tenant_id: string, name: string, policy_id?: string) => call('POST', '/agents', { tenant_id, name, policy_id }),
  };
}
