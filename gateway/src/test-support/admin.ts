/** A tiny admin client for tests: JSON in, JSON out, throws on unexpected status. */
export function adminClient(adminUrl: string, adminKey: string) {
  async function call(method: string, path: string, body?: unknown, expect?: number): Promise<any> {
    const res = await fetch(`${adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (expect !== undefined ? res.status !== expect : res.status >= 400) {
      throw new Error(`${method} ${path} -> ${res.status}: ${text}`);
    }
    return text ? JSON.parse(text) : null;
  }
  return {
    call,
    tenant: (id: string) => call('POST', '/tenants', { id, name: id }),
    policy: (id: string, body: Record<string, unknown>) => call('PUT', `/policies/${id}`, body),
    /** Creates an agent and returns it with its one-time key. */
    agent: (tenant_id: string, name: string, policy_id?: string) => call('POST', '/agents', { tenant_id, name, policy_id }),
  };
}
