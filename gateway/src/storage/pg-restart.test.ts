import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminApi, eventually, expectError, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { startOwnPostgres, type OwnPostgres } from '../test-support/own-postgres.js';

/**
 * Issue 23 item 2: PostgreSQL restarted or stopped under running gateways (a cluster of this test's own, never the
 * shared server). Nodes stay up, the data plane answers from its snapshot, the admin interface answers 503
 * store_unavailable with Retry-After at once, and everything works again (policy changes, usage rows) once it is back.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  requestId: string | null;
  code?: string;
}

async function chat(gw: TestGateway, key: string, content = 'hello there'): Promise<Answer> {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock/m', messages: [{ role: 'user', content }] }),
  });
  const text = await res.text();
  let code: string | undefined;
  try {
    code = JSON.parse(text)?.error?.code;
  } catch {
    // not JSON
  }
  return { status: res.status, requestId: res.headers.get('x-request-id'), code };
}

/** `workers` clients sending requests back to back, round-robin over the nodes, until stopped. */
function load(nodes: TestGateway[], key: string, workers: number) {
  const answers: Answer[] = [];
  const failures: unknown[] = [];
  let running = true;
  let n = 0;
  const loops = Array.from({ length: workers }, async (_, w) => {
    while (running) {
      const node = nodes[n++ % nodes.length]!;
      try {
        answers.push(await chat(node, key, `worker ${w} request ${n}`));
      } catch (e) {
        failures.push(e);
        await sleep(20);
      }
    }
  });
  return {
    answers,
    failures,
    async stop() {
      running = false;
      await Promise.all(loops);
      return { answers, failures };
    },
  };
}

/** Request ids of `ids` that have no usage row in the schema. */
async function missingUsage(url: string, schema: string, ids: string[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ request_id: string }>(`select request_id from "${schema}".usage_records where request_id = any($1)`, [ids]);
    const have = new Set(rows.map((r) => r.request_id));
    return ids.filter((id) => !have.has(id));
  } finally {
    await client.end();
  }
}

/** An admin call during the outage: CONTRACT's 503 store_unavailable with Retry-After, answered within a second. */
async function expectStoreUnavailable(api: AdminCall, method: string, path: string, body?: unknown): Promise<void> {
  const t0 = performance.now();
  const res = await api(method, path, { body });
  const ms = performance.now() - t0;
  expectError(res, 503, 'store_unavailable');
  expect(res.body.error.type).toBe('service_unavailable');
  expect(Number(res.headers.get('retry-after')), `Retry-After of ${method} ${path}`).toBeGreaterThan(0);
  expect(ms, `${method} ${path} answered after ${Math.round(ms)} ms`).toBeLessThan(1000);
}

describe('PostgreSQL restarts under running gateways (a cluster of the test\'s own)', () => {
  let own: OwnPostgres;
  const crashes: unknown[] = [];
  const onCrash = (e: unknown) => crashes.push(e);

  beforeAll(async () => {
    own = await startOwnPostgres();
    // Anything a node would die of (an 'error' event nobody handles) lands here instead of killing the test worker.
    process.on('uncaughtException', onCrash);
  });
  afterAll(async () => {
    process.off('uncaughtException', onCrash);
    await own?.cleanup();
  });

  test('one node: stays up across restarts, serves from its snapshot during an outage, admin 503 store_unavailable, then recovers', async () => {
    const gw = await startTestGateway({ storage: 'postgres', pgUrl: own.url });
    try {
      const api = adminApi(gw.adminUrl, gw.adminKey);
      expect((await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } })).status).toBe(201);
      expect((await api('PUT', '/policies/p', { body: { tenant_id: 'acme', allowed_models: null } })).status).toBe(201);
      const agent = (await api('POST', '/agents', { body: { tenant_id: 'acme', name: 'bot', policy_id: 'p' } })).body;
      const ids: string[] = [];
      const ok = async () => {
        const a = await chat(gw, agent.api_key);
        expect(a.status, JSON.stringify(a)).toBe(200);
        ids.push(a.requestId!);
      };
      await ok();

      // Idle: every pooled connection is terminated by the server (57P01).
      await own.restart('fast');
      await sleep(200);
      expect(crashes.map(String)).toEqual([]);
      await ok();
      await eventually(async () => (await api('GET', '/tenants/acme')).status === 200, 5000, 'admin to work after an idle restart');

      // Under light load.
      let traffic = load([gw], agent.api_key, 4);
      await sleep(200);
      await own.restart('fast');
      await sleep(300);
      let done = await traffic.stop();
      expect(crashes.map(String)).toEqual([]);
      expect(done.failures).toEqual([]);
      expect(done.answers.filter((a) => a.status !== 200)).toEqual([]);
      ids.push(...done.answers.map((a) => a.requestId!));
      await eventually(async () => (await api('GET', '/agents/' + agent.id)).status === 200, 5000, 'admin to work after a restart under load');
      // The rows of the requests answered so far are written once PostgreSQL is back.
      const schema = gw.storage.kind === 'postgres' ? gw.storage.schema : '';
      await eventually(async () => (await missingUsage(own.url, schema, ids)).length === 0, 10_000, 'usage rows of the requests answered across the restarts');

      // An outage: the data plane keeps answering, the admin interface says 503 at once.
      traffic = load([gw], agent.api_key, 2);
      await sleep(100);
      await own.stop('fast');
      await expectStoreUnavailable(api, 'GET', '/tenants/acme');
      await expectStoreUnavailable(api, 'GET', '/agents');
      await expectStoreUnavailable(api, 'PUT', '/policies/p', { allowed_models: ['nothing/*'] });
      await expectStoreUnavailable(api, 'GET', `/agents/${agent.id}`);
      await ok();
      await sleep(1200); // several failed snapshot polls and usage flushes
      await ok();
      await expectStoreUnavailable(api, 'GET', '/tenants/acme');
      expect(crashes.map(String)).toEqual([]);
      await own.start();
      await eventually(async () => (await api('GET', '/tenants/acme')).status === 200, 5000, 'admin to work once PostgreSQL is back');
      done = await traffic.stop();
      expect(done.failures).toEqual([]);
      expect(done.answers.filter((a) => a.status !== 200)).toEqual([]);
      expect(done.answers.length).toBeGreaterThan(5);
      ids.push(...done.answers.map((a) => a.requestId!));

      // A policy change made after the outage reaches the data plane.
      expect((await api('PUT', '/policies/p', { body: { allowed_models: ['nothing/*'] } })).status).toBe(200);
      const refused = await chat(gw, agent.api_key);
      expect(refused).toMatchObject({ status: 403, code: 'model_not_allowed' });

      // Every answered request is billed once the database is back (the usage writer retries).
      await eventually(async () => (await missingUsage(own.url, schema, ids)).length === 0, 10_000, 'usage rows of every answered request');
      expect(crashes.map(String)).toEqual([]);
    } finally {
      await gw.close();
    }
  });

  test('three nodes: PostgreSQL restarted under load; nodes stay up, every 200 has its usage row, later policy changes reach every node', async () => {
    const a = await startTestGateway({ storage: 'postgres', pgUrl: own.url });
    const schema = a.storage.kind === 'postgres' ? a.storage.schema : '';
    const b = await startTestGateway({ storage: 'postgres', pgUrl: own.url, pgSchema: schema, adminKey: a.adminKey });
    const c = await startTestGateway({ storage: 'postgres', pgUrl: own.url, pgSchema: schema, adminKey: a.adminKey });
    const nodes = [a, b, c];
    try {
      const api = adminApi(a.adminUrl, a.adminKey);
      expect((await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } })).status).toBe(201);
      expect((await api('PUT', '/policies/q', { body: { tenant_id: 'acme', allowed_models: null } })).status).toBe(201);
      const agent = (await api('POST', '/agents', { body: { tenant_id: 'acme', name: 'bot', policy_id: 'q' } })).body;
      for (const n of nodes) {
        await eventually(() => n.runtime.snapshot.agentByKeyHash(n.runtime.hasher.hash(agent.api_key)) !== undefined, 5000, 'every node to know the agent');
      }

      const traffic = load(nodes, agent.api_key, 12);
      await sleep(400);
      await own.restart('fast');
      await sleep(600);
      const { answers, failures } = await traffic.stop();
      expect(crashes.map(String)).toEqual([]);
      expect(failures).toEqual([]);
      expect(answers.length).toBeGreaterThan(50);
      expect(answers.filter((x) => x.status !== 200)).toEqual([]);

      // Every node is up and its admin interface works again.
      for (const n of nodes) {
        const nodeApi = adminApi(n.adminUrl, n.adminKey);
        await eventually(async () => (await nodeApi('GET', '/tenants/acme')).status === 200, 5000, `admin on ${n.url} to work again`);
      }
      const ids = answers.map((x) => x.requestId!);
      await eventually(async () => (await missingUsage(own.url, schema, ids)).length === 0, 10_000, 'a usage row for every 200');
      const client = new pg.Client({ connectionString: own.url });
      await client.connect();
      try {
        const { rows } = await client.query(`select count(*)::int as n from "${schema}".usage_records where request_id = any($1)`, [ids]);
        expect(rows[0].n).toBe(ids.length);
      } finally {
        await client.end();
      }

      // A change made on one node after the restart reaches the others through their snapshot polls.
      expect((await api('PUT', '/policies/q', { body: { allowed_models: ['nothing/*'] } })).status).toBe(200);
      for (const n of [b, c]) {
        await eventually(async () => (await chat(n, agent.api_key)).code === 'model_not_allowed', 3000, `the new policy on ${n.url}`);
      }
      expect(crashes.map(String)).toEqual([]);
    } finally {
      for (const n of [c, b, a]) await n.close();
    }
  });
});
