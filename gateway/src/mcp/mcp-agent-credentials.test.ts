// Per-agent upstream credentials: set through the admin API (PUT /api/agents/{id}/mcp-credentials/{server}), stored
// sealed (never in the database, an answer or the audit log in plaintext), and sent as that agent's headers to that
// server alone, in place of the server's own Authorization; other agents keep the server's. Two fixture servers that
// record every header they receive.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { adminApi, expectError, RFC3339 } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type HttpMcpFixture, startHttpMcpServer } from './__fixtures__/http-mcp-server.js';

const STDIO_SERVER = fileURLToPath(new URL('./__fixtures__/stdio-mcp-server.mjs', import.meta.url));
const AGENT_TOKEN = 'agent-a-upstream-token-3f9c2e';
const NEW_AGENT_TOKEN = 'agent-a-rotated-token-77d1a0';

let web: HttpMcpFixture;
let docs: HttpMcpFixture;
let gw: TestGateway;
let api: ReturnType<typeof adminApi>;
const agents: Record<'a' | 'b', { id: string; key: string }> = { a: { id: '', key: '' }, b: { id: '', key: '' } };

async function callSearch(key: string, tool = 'web__search'): Promise<void> {
  const client = new Client({ name: 'creds-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  try {
    const r = (await client.callTool({ name: tool, arguments: { query: 'q' } })) as CallToolResult;
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
  } finally {
    await client.close();
  }
}

/** The Authorization headers the fixture received from the last call on (the headers it saw since `from`). */
const authorizationsSince = (f: HttpMcpFixture, from: number) => new Set(f.headers.slice(from).map((h) => h.authorization));

beforeAll(async () => {
  web = await startHttpMcpServer();
  docs = await startHttpMcpServer();
  gw = await startTestGateway({
    config: {
      mcp_servers: {
        web: { url: web.url, headers: { Authorization: 'Bearer server-static', 'X-Team': 'blue' }, timeout_ms: 5_000 },
        docs: { url: docs.url, timeout_ms: 5_000 },
        files: { command: process.execPath, args: [STDIO_SERVER], timeout_ms: 5_000 },
      },
    },
  });
  const { call } = adminClient(gw.adminUrl, gw.adminKey);
  api = adminApi(gw.adminUrl, gw.adminKey);
  await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
  await call('POST', '/tenants', { id: 'globex', name: 'Globex' });
  for (const n of ['a', 'b'] as const) {
    const agent = await call('POST', '/agents', { name: `agent-${n}`, tenant_id: 'acme' });
    agents[n] = { id: agent.id, key: agent.api_key };
  }
});

afterAll(async () => {
  await gw?.close();
  await web?.close();
  await docs?.close();
});

describe('the admin API', () => {
  test('PUT stores them and answers only that they are set, which headers and when; GET and the listing the same', async () => {
    const path = `/agents/${agents.a.id}/mcp-credentials/web`;
    const unset = await api('GET', path);
    expect(unset.body).toEqual({ agent_id: agents.a.id, server: 'web', set: false, header_names: [], created_at: null, updated_at: null });
    const put = await api('PUT', path, { body: { headers: { Authorization: `Bearer ${AGENT_TOKEN}` } } });
    expect(put.status, put.text).toBe(201);
    expect(put.body).toEqual({ agent_id: agents.a.id, server: 'web', set: true, header_names: ['Authorization'], created_at: expect.stringMatching(RFC3339), updated_at: expect.stringMatching(RFC3339) });
    const got = await api('GET', path);
    expect(got.body).toEqual(put.body);
    expect(got.text).not.toContain(AGENT_TOKEN);
    const list = await api('GET', `/agents/${agents.a.id}/mcp-credentials`);
    expect(list.body).toEqual({ data: [put.body] });
    expect((await api('GET', `/agents/${agents.b.id}/mcp-credentials`)).body).toEqual({ data: [] });
  });

  test('bad input is a 400 naming what to fix; unknown agents and servers are 404; a stdio server takes none', async () => {
    const path = `/agents/${agents.b.id}/mcp-credentials/web`;
    for (const [body, what] of [
      [{ headers: {} }, /1 to 16 headers/],
      [{ headers: { Host: 'evil.example' } }, /may not set Host/],
      [{ headers: { 'Mcp-Session-Id': 'x' } }, /may not set/],
      [{ headers: { Authorization: 'Bearer a\r\nX-Injected: 1' } }, /printable ASCII on one line/],
      [{ headers: { 'Bad Name': 'v' } }, /header name/],
      [{ headers: { authorization: 'a', Authorization: 'b' } }, /twice/],
      [{ headers: { Authorization: 'x' }, extra: 1 }, /extra/],
    ] as const) {
      const res = await api('PUT', path, { body });
      expectError(res, 400, 'validation_failed');
      expect(res.body.error.message, JSON.stringify(body)).toMatch(what);
    }
    expectError(await api('PUT', `/agents/${agents.b.id}/mcp-credentials/nope`, { body: { headers: { Authorization: 'x' } } }), 404, 'mcp_server_not_found');
    expectError(await api('PUT', '/agents/agt_0000000000000000/mcp-credentials/web', { body: { headers: { Authorization: 'x' } } }), 404, 'agent_not_found');
    const stdio = await api('PUT', `/agents/${agents.b.id}/mcp-credentials/files`, { body: { headers: { Authorization: 'x' } } });
    expectError(stdio, 400, 'validation_failed', 'server');
    expect(stdio.body.error.message).toMatch(/stdio/);
    expect((await api('GET', path)).body.set).toBe(false);
  });

  test("a key of another tenant cannot read or write them, and a viewer cannot write", async () => {
    const other = (await api('POST', '/admin-keys', { body: { name: 'globex-admin', role: 'tenant_admin', tenant_id: 'globex' } })).body.api_key as string;
    const viewer = (await api('POST', '/admin-keys', { body: { name: 'acme-viewer', role: 'viewer', tenant_id: 'acme' } })).body.api_key as string;
    const path = `/agents/${agents.a.id}/mcp-credentials/web`;
    expectError(await api('GET', path, { key: other }), 403, 'tenant_forbidden');
    expectError(await api('PUT', path, { key: other, body: { headers: { Authorization: 'Bearer stolen' } } }), 403, 'tenant_forbidden');
    expectError(await api('DELETE', path, { key: other }), 403, 'tenant_forbidden');
    expectError(await api('PUT', path, { key: viewer, body: { headers: { Authorization: 'Bearer mine' } } }), 403, 'insufficient_role');
    expect((await api('GET', path, { key: viewer })).body.set).toBe(true);
  });
});

describe('on the way to the upstream', () => {
  test("the agent's headers go to that server alone, in place of the server's Authorization; other agents keep the server's", async () => {
    const fromWeb = web.headers.length;
    const fromDocs = docs.headers.length;
    await callSearch(agents.a.key);
    await callSearch(agents.a.key, 'docs__search');
    const seenByWeb = web.headers.slice(fromWeb);
    // The agent's own connection: its token and the server's other headers, never the server's Authorization.
    expect(authorizationsSince(web, fromWeb)).toEqual(new Set([`Bearer ${AGENT_TOKEN}`]));
    expect(seenByWeb.length).toBeGreaterThan(0);
    expect(seenByWeb.every((h) => h['x-team'] === 'blue')).toBe(true);
    expect(docs.headers.slice(fromDocs).some((h) => JSON.stringify(h).includes(AGENT_TOKEN))).toBe(false);

    const fromB = web.headers.length;
    await callSearch(agents.b.key);
    expect(authorizationsSince(web, fromB)).toEqual(new Set(['Bearer server-static']));
  });

  test('a new credential is used from the next request on; a deleted one leaves the server its own', async () => {
    const path = `/agents/${agents.a.id}/mcp-credentials/web`;
    const put = await api('PUT', path, { body: { headers: { Authorization: `Bearer ${NEW_AGENT_TOKEN}` } } });
    expect(put.status).toBe(200);
    let from = web.headers.length;
    await callSearch(agents.a.key);
    const rotated = authorizationsSince(web, from);
    expect(rotated.has(`Bearer ${NEW_AGENT_TOKEN}`)).toBe(true);
    expect(rotated.has(`Bearer ${AGENT_TOKEN}`)).toBe(false);

    expect((await api('DELETE', path)).status).toBe(204);
    expect((await api('DELETE', path)).status).toBe(204);
    expect((await api('GET', path)).body.set).toBe(false);
    from = web.headers.length;
    await callSearch(agents.a.key);
    expect(authorizationsSince(web, from)).toEqual(new Set(['Bearer server-static']));
  });
});

describe('a sealed credential moved to another agent', () => {
  test("does not open: that agent's calls to the server are refused rather than sent with another identity", async () => {
    expect((await api('PUT', `/agents/${agents.a.id}/mcp-credentials/web`, { body: { headers: { Authorization: `Bearer ${AGENT_TOKEN}` } } })).status).toBe(201);
    expect((await api('PUT', `/agents/${agents.b.id}/mcp-credentials/web`, { body: { headers: { Authorization: 'Bearer agent-b-own' } } })).status).toBe(201);
    const db = new SQLite((gw.storage as { path: string }).path);
    try {
      const sealedOfA = (db.prepare('select sealed from mcp_credentials where agent_id = ? and server = ?').get(agents.a.id, 'web') as { sealed: string }).sealed;
      db.prepare('update mcp_credentials set sealed = ? where agent_id = ? and server = ?').run(sealedOfA, agents.b.id, 'web');
    } finally {
      db.close();
    }
    const from = web.headers.length;
    const client = new Client({ name: 'creds-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agents.b.key}` } } }));
    try {
      const r = (await client.callTool({ name: 'web__search', arguments: { query: 'q' } })) as CallToolResult;
      expect(r.isError).toBe(true);
      expect(r._meta?.['agentgw/error']).toEqual({ type: 'upstream_error', code: 'upstream_unavailable' });
      expect(JSON.stringify(r.content)).toMatch(/cannot be read/);
    } finally {
      await client.close();
    }
    expect(web.headers.slice(from).some((h) => JSON.stringify(h).includes(AGENT_TOKEN))).toBe(false);
  });
});

describe('at rest and in the audit log', () => {
  test('the database holds them sealed; audit entries name each write without the values; a deleted agent takes them along', async () => {
    const path = `/agents/${agents.b.id}/mcp-credentials/docs`;
    expect((await api('PUT', path, { body: { headers: { 'X-Api-Key': AGENT_TOKEN } } })).status).toBe(201);
    expect(gw.storage.kind).toBe('sqlite');
    const db = new SQLite((gw.storage as { path: string }).path, { readonly: true });
    try {
      const rows = db.prepare('select * from mcp_credentials').all() as Array<Record<string, string>>;
      expect(rows.map((r) => `${r.agent_id}/${r.server}`)).toContain(`${agents.b.id}/docs`);
      for (const r of rows) expect(r.sealed).toMatch(/^v1\./);
      const everything = JSON.stringify(db.prepare("select name from sqlite_master where type = 'table'").all().flatMap((t) => db.prepare(`select * from "${(t as { name: string }).name}"`).all()));
      for (const secret of [AGENT_TOKEN, NEW_AGENT_TOKEN, Buffer.from(AGENT_TOKEN).toString('base64')]) expect(everything).not.toContain(secret);
    } finally {
      db.close();
    }

    const audit = await api('GET', '/audit?kind=mcp_credentials&limit=100');
    const actions = (audit.body.data as Array<{ action: string; object: { id: string } }>).map((e) => `${e.action} ${e.object.id}`);
    expect(actions).toEqual(
      expect.arrayContaining([`mcp_credentials.create ${agents.a.id}/web`, `mcp_credentials.update ${agents.a.id}/web`, `mcp_credentials.delete ${agents.a.id}/web`, `mcp_credentials.create ${agents.b.id}/docs`]),
    );
    // One delete audited: the second DELETE removed nothing.
    expect(actions.filter((a) => a === `mcp_credentials.delete ${agents.a.id}/web`).length).toBe(1);
    expect(audit.text).not.toContain(AGENT_TOKEN);
    expect(audit.text).not.toContain(NEW_AGENT_TOKEN);

    expect((await api('DELETE', `/agents/${agents.b.id}`)).status).toBe(204);
    const after = new SQLite((gw.storage as { path: string }).path, { readonly: true });
    try {
      expect(after.prepare('select count(*) as n from mcp_credentials where agent_id = ?').get(agents.b.id)).toEqual({ n: 0 });
      expect(after.prepare('select count(*) as n from mcp_credentials where agent_id = ?').get(agents.a.id)).toEqual({ n: 1 });
    } finally {
      after.close();
    }
  });
});

describe('on PostgreSQL', () => {
  test('the same writes, reads and sealing, and a deleted agent takes them along', async () => {
    const pgw = await startTestGateway({ storage: 'postgres', config: { mcp_servers: { web: { url: web.url, timeout_ms: 5_000 } } } });
    try {
      const { call } = adminClient(pgw.adminUrl, pgw.adminKey);
      const papi = adminApi(pgw.adminUrl, pgw.adminKey);
      await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
      const agent = await call('POST', '/agents', { name: 'pg-agent', tenant_id: 'acme' });
      const path = `/agents/${agent.id}/mcp-credentials/web`;
      expect((await papi('PUT', path, { body: { headers: { Authorization: `Bearer ${AGENT_TOKEN}` } } })).status).toBe(201);
      expect((await papi('PUT', path, { body: { headers: { Authorization: `Bearer ${NEW_AGENT_TOKEN}`, 'X-Org': 'acme' } } })).body).toMatchObject({ set: true, header_names: ['Authorization', 'X-Org'] });
      const storage = pgw.storage as { url: string; schema: string };
      const client = new pg.Client({ connectionString: storage.url });
      await client.connect();
      try {
        const rows = (await client.query(`select row_to_json(t)::text as j from "${storage.schema}".mcp_credentials t`)).rows as Array<{ j: string }>;
        expect(rows.length).toBe(1);
        expect(rows[0]!.j).not.toContain(NEW_AGENT_TOKEN);
        expect(rows[0]!.j).toContain('"sealed":"v1.');
        const from = web.headers.length;
        const mcp = new Client({ name: 'pg-creds', version: '1.0.0' });
        await mcp.connect(new StreamableHTTPClientTransport(new URL(`${pgw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.api_key}` } } }));
        await mcp.callTool({ name: 'web__search', arguments: { query: 'q' } });
        await mcp.close();
        expect(new Set(web.headers.slice(from).map((h) => h.authorization))).toEqual(new Set([`Bearer ${NEW_AGENT_TOKEN}`]));
        expect((await papi('DELETE', `/agents/${agent.id}`)).status).toBe(204);
        expect((await client.query(`select count(*)::int as n from "${storage.schema}".mcp_credentials`)).rows[0]).toEqual({ n: 0 });
      } finally {
        await client.end();
      }
    } finally {
      await pgw.close();
    }
  });
});

describe('across nodes', () => {
  test('another node sharing the database and AGENTGW_SECRET_KEY sends them from the write on', async () => {
    const secret = 'shared-secret-of-this-deployment-0123456789';
    const servers = { web: { url: web.url, timeout_ms: 5_000 } };
    const n1 = await startTestGateway({ env: { AGENTGW_SECRET_KEY: secret }, config: { mcp_servers: servers } });
    const n2 = await startTestGateway({ env: { AGENTGW_SECRET_KEY: secret }, sqlitePath: (n1.storage as { path: string }).path, adminKey: n1.adminKey, config: { mcp_servers: servers } });
    try {
      const { call } = adminClient(n1.adminUrl, n1.adminKey);
      await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
      const agent = await call('POST', '/agents', { name: 'roaming', tenant_id: 'acme' });
      const callOn = async (node: TestGateway) => {
        const client = new Client({ name: 'node-creds', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.api_key}` } } }));
        try {
          const r = (await client.callTool({ name: 'web__search', arguments: { query: 'q' } })) as CallToolResult;
          expect(r.isError, JSON.stringify(r)).toBeFalsy();
        } finally {
          await client.close();
        }
      };
      // Node 2 has served the agent before the write (its view of the agent's credentials is cached).
      await callOn(n2);
      const token = 'node-shared-token-8b2d4e';
      expect((await adminApi(n1.adminUrl, n1.adminKey)('PUT', `/agents/${agent.id}/mcp-credentials/web`, { body: { headers: { Authorization: `Bearer ${token}` } } })).status).toBe(201);
      // The write returns once every node has read it (as a key revocation does).
      const from = web.headers.length;
      await callOn(n2);
      expect(new Set(web.headers.slice(from).map((h) => h.authorization))).toEqual(new Set([`Bearer ${token}`]));
    } finally {
      await n2.close();
      await n1.close();
    }
  });
});
