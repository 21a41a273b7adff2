import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from './admin-client.js';
import { AdminApiError, AdminConnectionError } from './errors.js';

const seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string }[] = [];
let server: Server;
let base: string;

const T = '2026-01-01T00:00:00Z';
const tenant = (id: string) => ({ id, name: id, labels: {}, created_at: T, updated_at: T });

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      const url = new URL(req.url ?? '/', 'http://x');
      res.setHeader('content-type', 'application/json');
      if (url.pathname === '/api/tenants' && req.method === 'GET') {
        const page = url.searchParams.get('cursor') === 'c2' ? { data: [tenant('b')], next_cursor: null } : { data: [tenant('a')], next_cursor: 'c2' };
        res.end(JSON.stringify(page));
      } else if (url.pathname === '/api/tenants/a' && req.method === 'DELETE') {
        res.statusCode = 204;
        res.end();
      } else if (url.pathname === '/api/policies/p' && req.method === 'PUT') {
        res.statusCode = 201;
        res.end(JSON.stringify({ id: 'p' }));
      } else if (url.pathname === '/api/agents' && req.method === 'POST') {
        res.statusCode = 409;
        res.end(JSON.stringify({ error: { message: 'An agent named x already exists.', type: 'conflict', code: 'agent_exists', param: null } }));
      } else {
        res.statusCode = 502;
        res.setHeader('content-type', 'text/html');
        res.end('<html>bad gateway</html>');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('AdminClient', () => {
  it('sends the admin key and follows next_cursor to the last page', async () => {
    const client = new AdminClient({ baseUrl: base, adminKey: 'adk_k' });
    expect((await client.listAllTenants()).map((t) => t.id)).toEqual(['a', 'b']);
    expect(seen.at(-1)?.headers.authorization).toBe('Bearer adk_k');
    expect(seen.at(-1)?.url).toBe('/api/tenants?limit=500&cursor=c2');
  });

  it('reads 201 vs 200 of PUT as created, and an empty 204', async () => {
    const client = new AdminClient({ baseUrl: base, adminKey: 'k' });
    expect(await client.putPolicy('p', { monthly_budget: 1 })).toMatchObject({ created: true });
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ monthly_budget: 1 });
    await expect(client.deleteTenant('a')).resolves.toBeUndefined();
  });

  it('turns the error body into AdminApiError and sends the Idempotency-Key', async () => {
    const client = new AdminClient({ baseUrl: base, adminKey: 'k' });
    const err = await client.createAgent({ name: 'x', tenant_id: 't' }, { idempotencyKey: 'idem-1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdminApiError);
    expect(err).toMatchObject({ status: 409, code: 'agent_exists', type: 'conflict', message: 'An agent named x already exists.' });
    expect(seen.at(-1)?.headers['idempotency-key']).toBe('idem-1');
  });

  it('still gives a sentence for a body that is not the error shape', async () => {
    const err = await new AdminClient({ baseUrl: base, adminKey: 'k' }).getSystemConfig().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502, code: 'http_502', message: 'HTTP 502: <html>bad gateway</html>' });
  });

  it('an unreachable gateway is a connection error with a short reason', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const url = `http://127.0.0.1:${port}/api`;
    const err = await new AdminClient({ baseUrl: url, adminKey: 'k' }).listAllTenants().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdminConnectionError);
    expect((err as Error).message).toBe(`cannot reach the agentgw admin interface at ${url}: connection refused`);
  });
});
