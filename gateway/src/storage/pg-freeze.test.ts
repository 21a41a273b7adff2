import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminApi, eventually } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { startOwnPostgres, type OwnPostgres } from '../test-support/own-postgres.js';

/**
 * PostgreSQL frozen (SIGSTOP of the postmaster and every backend of a cluster of the test's own, never the shared
 * server) under three running nodes: the server keeps its sockets open and answers nothing. Every request that needs
 * the database is answered within limits.db_timeout_ms (503 store_unavailable with Retry-After), requests that do not
 * need it are served, and everything works again once it is thawed.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The deadline the nodes are given, and the margin that proves "did not hang" (it hung for 37-39 s before). */
const DEADLINE_MS = 3000;
const MARGIN_MS = 4000;
const FREEZE_MS = 40_000;
/** Any one HTTP call of the test: past this it fails naming the call instead of holding the test until its timeout. */
const CALL_LIMIT_MS = 20_000;

type Kind = 'admin-read' | 'admin-write' | 'stored' | 'stored-stream' | 'previous' | 'not-stored' | 'chat';

interface Answer {
  kind: Kind;
  node: number;
  ms: number;
  status: number;
  code?: string;
  message?: string;
  retryAfter: string | null;
  /** x-agentgw-response-stored */
  storedHeader: string | null;
  /** The Responses object's `store` (the terminal event's, for a stream). */
  store?: boolean;
  id?: string;
}

function parse(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The last `response` object of an SSE stream's events. */
function lastResponse(text: string): any {
  let response: any;
  for (const frame of text.split('\n\n')) {
    const data = frame.split('\n').find((l) => l.startsWith('data: '));
    const event = data ? parse(data.slice(6)) : undefined;
    if (event?.response) response = event.response;
  }
  return response;
}

describe('PostgreSQL frozen under running gateways (a cluster of the test\'s own)', () => {
  let own: OwnPostgres;
  const crashes: unknown[] = [];
  const onCrash = (e: unknown) => crashes.push(e);

  beforeAll(async () => {
    own = await startOwnPostgres();
    process.on('uncaughtException', onCrash);
  });
  afterAll(async () => {
    process.off('uncaughtException', onCrash);
    await own?.cleanup();
  });

  test('three nodes, frozen 40 s: no request waits past limits.db_timeout_ms, 503 store_unavailable with Retry-After, and all is well once thawed', async () => {
    // Where the test is, printed as it goes: a run cut off by the test's timeout still says which step it was on.
    const began = performance.now();
    const step = (what: string) => console.log(`[${((performance.now() - began) / 1000).toFixed(1)} s] ${what}`);
    const config = { limits: { db_timeout_ms: DEADLINE_MS } };
    const a = await startTestGateway({ storage: 'postgres', pgUrl: own.url, config });
    const schema = a.storage.kind === 'postgres' ? a.storage.schema : '';
    const b = await startTestGateway({ storage: 'postgres', pgUrl: own.url, pgSchema: schema, adminKey: a.adminKey, config });
    const c = await startTestGateway({ storage: 'postgres', pgUrl: own.url, pgSchema: schema, adminKey: a.adminKey, config });
    const nodes = [a, b, c];
    let passed = false;
    step('three nodes started');
    try {
      const api = adminApi(a.adminUrl, a.adminKey);
      expect((await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } })).status).toBe(201);
      expect((await api('PUT', '/policies/p', { body: { tenant_id: 'acme', allowed_models: null } })).status).toBe(201);
      const agent = (await api('POST', '/agents', { body: { tenant_id: 'acme', name: 'bot', policy_id: 'p' } })).body;
      for (const n of nodes) {
        await eventually(() => n.runtime.snapshot.agentByKeyHash(n.runtime.hasher.hash(agent.api_key)) !== undefined, 5000, 'every node to know the agent');
      }
      const headers = { authorization: `Bearer ${agent.api_key}`, 'content-type': 'application/json' };
      const post = (n: TestGateway, path: string, body: unknown) =>
        fetch(`${n.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(CALL_LIMIT_MS) });
      const get = (n: TestGateway, path: string) => fetch(`${n.baseUrl}${path}`, { headers, signal: AbortSignal.timeout(CALL_LIMIT_MS) });
      step('three nodes up, agent known everywhere');
      const first = (await (await post(a, '/responses', { model: 'mock/m', input: 'remember 42' })).json()) as any;
      expect(first.id).toMatch(/^resp_/);

      const send = async (kind: Kind, node: number): Promise<Answer> => {
        const n = nodes[node]!;
        const nodeApi = adminApi(n.adminUrl, n.adminKey);
        const t0 = performance.now();
        let res: { status: number; headers: Headers; text: string };
        // A request still unanswered past the margin is given up (its time fails the check below, naming it) rather
        // than left open, where it would hold the nodes' close and end the test by its timeout, saying nothing.
        const signal = AbortSignal.timeout(DEADLINE_MS + MARGIN_MS);
        try {
          if (kind === 'admin-read' || kind === 'admin-write') {
            const r = kind === 'admin-read' ? await nodeApi('GET', '/tenants/acme', { signal }) : await nodeApi('PUT', '/policies/p', { body: { labels: { at: String(Date.now()) } }, signal });
            res = r;
          } else {
            const body =
              kind === 'chat'
                ? { model: 'mock/m', messages: [{ role: 'user', content: 'hi' }] }
                : { model: 'mock/m', input: 'hello', ...(kind === 'previous' ? { previous_response_id: first.id } : {}), ...(kind === 'not-stored' ? { store: false } : {}), ...(kind === 'stored-stream' ? { stream: true } : {}) };
            const r = await fetch(`${n.baseUrl}${kind === 'chat' ? '/chat/completions' : '/responses'}`, { method: 'POST', headers, body: JSON.stringify(body), signal });
            res = { status: r.status, headers: r.headers, text: await r.text() };
          }
        } catch (e) {
          const ms = performance.now() - t0;
          step(`${kind} on node ${node}: no answer after ${Math.round(ms)} ms (${String(e)})`);
          return { kind, node, ms, status: 0, message: String(e), retryAfter: null, storedHeader: null };
        }
        const ms = performance.now() - t0;
        const json = parse(res.text);
        const response = kind === 'stored-stream' && res.status === 200 ? lastResponse(res.text) : json;
        return {
          kind,
          node,
          ms,
          status: res.status,
          code: json?.error?.code,
          message: json?.error?.message,
          retryAfter: res.headers.get('retry-after'),
          storedHeader: res.headers.get('x-agentgw-response-stored'),
          store: typeof response?.store === 'boolean' ? response.store : undefined,
          id: typeof response?.id === 'string' ? response.id : undefined,
        };
      };
      const kinds: Kind[] = ['admin-read', 'admin-write', 'stored', 'stored-stream', 'previous', 'not-stored', 'chat'];

      // Requests of every kind on every node, a round every 2 s for the whole freeze, none waiting for another.
      step('freezing PostgreSQL');
      own.freeze();
      const frozenAt = performance.now();
      const pending: Array<Promise<Answer>> = [];
      while (performance.now() - frozenAt < FREEZE_MS - 1000) {
        for (let node = 0; node < nodes.length; node++) for (const kind of kinds) pending.push(send(kind, node));
        await sleep(2000);
      }
      const answers = await Promise.race([
        Promise.all(pending),
        sleep(FREEZE_MS + DEADLINE_MS + MARGIN_MS - (performance.now() - frozenAt)).then(() => undefined),
      ]);
      own.thaw();
      step(answers ? 'every request answered; thawed' : 'thawed with requests unanswered');
      expect(answers, 'every request answered while PostgreSQL was still frozen').toBeDefined();
      expect(crashes.map(String)).toEqual([]);

      const slowest = Object.fromEntries(kinds.map((k) => [k, Math.round(Math.max(...answers!.filter((x) => x.kind === k).map((x) => x.ms)))]));
      const storedTurns = answers!.filter((x) => x.kind === 'stored' || x.kind === 'stored-stream');
      console.log(
        `slowest answer per kind with PostgreSQL frozen (ms, deadline ${DEADLINE_MS}): ${JSON.stringify(slowest)}; ` +
          `stored turns: ${storedTurns.filter((x) => x.status === 503).length} refused 503, ${storedTurns.filter((x) => x.status === 200).length} answered as not stored`,
      );
      for (const x of answers!) {
        expect(x.ms, `${x.kind} on node ${x.node} answered after ${Math.round(x.ms)} ms`).toBeLessThan(DEADLINE_MS + MARGIN_MS);
        const unavailable = x.status === 503 && x.code === 'store_unavailable' && Number(x.retryAfter) > 0;
        switch (x.kind) {
          case 'admin-read':
          case 'admin-write':
          case 'previous':
            expect(unavailable, JSON.stringify(x)).toBe(true);
            break;
          case 'stored':
          case 'stored-stream':
            // Refused before the upstream call once the store is known to be down; before that, answered and said so.
            if (!unavailable) {
              expect(x, JSON.stringify(x)).toMatchObject({ status: 200, store: false });
              if (x.kind === 'stored') expect(x.storedHeader).toBe('false');
            }
            break;
          case 'not-stored':
          case 'chat':
            expect(x.status, JSON.stringify(x)).toBe(200);
            break;
        }
      }
      // Most stored turns were refused at once, without waiting for the database.
      const stored = storedTurns;
      expect(stored.filter((x) => x.status === 503).length).toBeGreaterThan(stored.length / 2);

      // Thawed: every node's admin interface and stored responses work again.
      step('waiting for every node to work again');
      for (const n of nodes) {
        const nodeApi = adminApi(n.adminUrl, n.adminKey);
        await eventually(async () => (await nodeApi('GET', '/tenants/acme', { signal: AbortSignal.timeout(CALL_LIMIT_MS) })).status === 200, 10_000, `admin on ${n.url} once thawed`);
      }
      const again = await eventually(async () => {
        const r = await post(b, '/responses', { model: 'mock/m', input: 'after', previous_response_id: first.id });
        return r.status === 200 ? r : undefined;
      }, 10_000, 'a stored turn once thawed');
      expect(again.headers.get('x-agentgw-response-stored')).toBeNull();
      const later = (await again.json()) as any;
      expect(later.store).toBe(true);
      expect((await get(c, `/responses/${later.id}`)).status).toBe(200);
      step(`a stored turn works again; reading the ${stored.filter((s) => s.status === 200).length} turns answered as not stored`);

      // A turn answered as not stored is a 404 saying so, on every node, on GET and as previous_response_id.
      for (const x of stored.filter((s) => s.status === 200)) {
        for (const n of nodes) {
          await eventually(async () => {
            const r = await get(n, `/responses/${x.id}`);
            const body = (await r.json()) as any;
            return r.status === 404 && body.error.code === 'response_not_found' && /not stored/.test(body.error.message);
          }, 10_000, `GET ${x.id} on ${n.url} to say it was not stored`);
        }
        const r = await post(c, '/responses', { model: 'mock/m', input: 'next', previous_response_id: x.id });
        const body = (await r.json()) as any;
        expect(r.status, JSON.stringify(body)).toBe(404);
        expect(body.error).toMatchObject({ code: 'response_not_found', param: 'previous_response_id' });
        expect(body.error.message).toMatch(/not stored/);
      }
      expect(crashes.map(String)).toEqual([]);
      step('done; closing the nodes');
      passed = true;
    } finally {
      own.thaw();
      const stuck: string[] = [];
      for (const n of [c, b, a]) {
        const t0 = performance.now();
        const closed = await Promise.race([n.close().then(() => true), sleep(CALL_LIMIT_MS).then(() => false)]);
        step(closed ? `closed ${n.url} in ${Math.round(performance.now() - t0)} ms` : `${n.url} still closing after ${CALL_LIMIT_MS} ms`);
        if (!closed) stuck.push(n.url);
      }
      // Said only when nothing failed before: an earlier failure is the one to read.
      if (passed) expect(stuck, 'nodes that did not close once thawed').toEqual([]);
    }
  }, 150_000);
});
