// A stored Responses turn (store: true, the default) that cannot be stored is never answered as stored: while the
// database is known to be down it is refused with 503 store_unavailable before any upstream call; when the write fails
// after the answer, the answer says so (`store: false`, and x-agentgw-response-stored: false when not streamed), and its
// id reads as a 404 saying it was not stored, on GET and as previous_response_id. Native and translated targets.
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { eventually } from '../../../test-support/admin-api.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedResponses, startScriptedResponses, textResponse } from '../../../test-support/scripted-responses.js';
import type { Store, StoredResponse } from '../../../storage/store.js';
import { schemaCheckingFetch } from './__fixtures__/open-responses-schema.js';

const MODELS = { translated: 'mock/mock-1', native: 'openai/gpt-4.1' } as const;

let gw: TestGateway;
let upstream: ScriptedResponses;
let key: string;
let store: Store;

beforeAll(async () => {
  upstream = await startScriptedResponses(() => textResponse('ok'));
  gw = await startTestGateway({ config: { providers: { openai: { type: 'openai', base_url: upstream.url, api_key: 'sk-test' }, mock: { type: 'mock' } } } });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'bot')).api_key as string;
  store = gw.runtime.store;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const headers = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
// Every response object and event answered (store: false ones included) is validated against the Open Responses schema.
const schema = schemaCheckingFetch();
afterEach(async () => {
  expect(await schema.settled()).toEqual([]);
});
afterAll(() => {
  // The check ran: answers were read and validated.
  expect(schema.checked()).toBeGreaterThan(0);
});
const post = (body: unknown) => schema.fetch(`${gw.baseUrl}/responses`, { method: 'POST', headers: headers(), body: JSON.stringify(body) });

/** Runs `f` with the store known to be down (as StoreHealth says after a failed call). */
async function whileDown<T>(f: () => Promise<T>): Promise<T> {
  Object.defineProperty(store, 'reachable', { get: () => false, configurable: true });
  try {
    return await f();
  } finally {
    delete (store as { reachable?: boolean }).reachable;
  }
}

/** Runs `f` with every response write failing in the database (a value it refuses stands for any failure). */
async function whileWritesFail<T>(f: () => Promise<T>): Promise<T> {
  const put = store.putResponse;
  store.putResponse = (r: StoredResponse) => put.call(store, { ...r, input: null as unknown as string });
  try {
    return await f();
  } finally {
    store.putResponse = put;
  }
}

describe.each(Object.entries(MODELS))('a stored turn that cannot be stored (%s)', (_, model) => {
  test('while the database is known to be down: 503 store_unavailable with Retry-After before any upstream call; store: false is served', async () => {
    const first = (await (await post({ model, input: 'remember 42' })).json()) as any;
    const calls = upstream.responseRequests.length;
    await whileDown(async () => {
      for (const body of [{ model, input: 'hi' }, { model, input: 'hi', stream: true }, { model, input: 'hi', store: true }, { model, input: 'more', store: false, previous_response_id: first.id }]) {
        const res = await post(body);
        const error = ((await res.json()) as any).error;
        expect(res.status, JSON.stringify(body)).toBe(503);
        expect(error).toMatchObject({ type: 'service_unavailable', code: 'store_unavailable' });
        expect(error.message).toMatch(/send store: false/);
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      const get = await fetch(`${gw.baseUrl}/responses/${first.id}`, { headers: headers() });
      expect(get.status).toBe(503);
      expect(upstream.responseRequests.length).toBe(calls);
      const unstored = await post({ model, input: 'hi', store: false });
      expect(unstored.status).toBe(200);
      expect(((await unstored.json()) as any).store).toBe(false);
    });
  });

  test('a write that fails after the answer: the answer says not stored; its id is a 404 saying why, on GET and as previous_response_id', async () => {
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0, fetch: schema.fetch });
    const { plain, streamed } = await whileWritesFail(async () => {
      const res = await post({ model, input: 'hello' });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-agentgw-response-stored')).toBe('false');
      const plain = (await res.json()) as any;
      expect(plain.store).toBe(false);
      expect(plain.output.length).toBeGreaterThan(0);
      let completed: any;
      for await (const event of await client.responses.create({ model, input: 'hello', stream: true })) {
        if (event.type === 'response.completed') completed = event.response;
      }
      expect(completed.store).toBe(false);
      return { plain, streamed: completed };
    });
    const unstored = (store as unknown as { unstored: { size: number } }).unstored;
    // Read at once on this node, and once the marks are in the database, from there (what every node reads).
    for (const phase of ['marked here', 'marked in the database']) {
      if (phase === 'marked in the database') await eventually(() => unstored.size === 0, 10_000, 'the marks to reach the database');
      for (const id of [plain.id, streamed.id]) {
        const get = await fetch(`${gw.baseUrl}/responses/${id}`, { headers: headers() });
        const error = ((await get.json()) as any).error;
        expect(get.status, phase).toBe(404);
        expect(error).toMatchObject({ code: 'response_not_found', param: 'response_id' });
        expect(error.message).toMatch(new RegExp(`^Response ${id} was answered but not stored: the database refused to store it\\.`));
        const next = await post({ model, input: 'go on', previous_response_id: id });
        const nextError = ((await next.json()) as any).error;
        expect(next.status, phase).toBe(404);
        expect(nextError).toMatchObject({ code: 'response_not_found', param: 'previous_response_id' });
        expect(nextError.message).toMatch(/was answered but not stored.*send the whole conversation as input instead/);
        expect((await fetch(`${gw.baseUrl}/responses/${id}/input_items`, { headers: headers() })).status).toBe(404);
      }
    }
    // Stored turns are unchanged: no header, store: true, readable.
    const ok = await post({ model, input: 'hello' });
    expect(ok.headers.get('x-agentgw-response-stored')).toBeNull();
    const body = (await ok.json()) as any;
    expect(body.store).toBe(true);
    expect((await fetch(`${gw.baseUrl}/responses/${body.id}`, { headers: headers() })).status).toBe(200);
  });
});
