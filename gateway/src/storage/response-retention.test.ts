import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { loadConfig } from '../config.js';
import { startTestGateway } from '../test-support/gateway.js';
import { openStore } from './open-store.js';
import { RESPONSE_SWEEP_INTERVAL_MS, startResponseRetention } from './response-retention.js';
import type { StoredResponse } from './store.js';

const T0 = Date.parse('2030-05-20T12:00:00.000Z');
const DAY = 86_400_000;

/** A store that records each sweep's bound and answers what the test says. */
function fakeStore(answer: () => Promise<number> = async () => 0) {
  const sweeps: string[] = [];
  return {
    sweeps,
    sweepResponses: vi.fn(async (before: string) => {
      sweeps.push(before);
      return answer();
    }),
  };
}

const quietLog = () => ({ error: vi.fn(), info: vi.fn() });

describe('the stored-response retention sweep', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  test('sweeps at start, then every hour, with the cutoff retention_days before the clock', async () => {
    vi.useFakeTimers();
    let now = T0;
    const store = fakeStore();
    const retention = startResponseRetention(store, { retentionDays: 7, now: () => now, log: quietLog() });
    await retention.sweep();
    expect(store.sweeps).toEqual([new Date(T0 - 7 * DAY).toISOString()]);

    now = T0 + RESPONSE_SWEEP_INTERVAL_MS;
    await vi.advanceTimersByTimeAsync(RESPONSE_SWEEP_INTERVAL_MS);
    expect(store.sweeps).toEqual([new Date(T0 - 7 * DAY).toISOString(), new Date(T0 + RESPONSE_SWEEP_INTERVAL_MS - 7 * DAY).toISOString()]);

    await retention.stop();
    await vi.advanceTimersByTimeAsync(3 * RESPONSE_SWEEP_INTERVAL_MS);
    expect(store.sweeps).toHaveLength(2);
  });

  test('a failed sweep is one log line, and the next one runs', async () => {
    vi.useFakeTimers();
    let fail = true;
    const store = fakeStore(async () => {
      if (fail) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return 3;
    });
    const log = quietLog();
    const retention = startResponseRetention(store, { retentionDays: 30, now: () => T0, log });
    await retention.sweep();
    expect(log.error).toHaveBeenCalledTimes(1);
    expect(log.error.mock.calls[0]![1]).toMatch(/failed/);

    fail = false;
    await vi.advanceTimersByTimeAsync(RESPONSE_SWEEP_INTERVAL_MS);
    expect(store.sweeps).toHaveLength(2);
    expect(log.error).toHaveBeenCalledTimes(1);
    expect(log.info).toHaveBeenCalledWith({ deleted: 3, before: new Date(T0 - 30 * DAY).toISOString() }, expect.any(String));
    await retention.stop();
  });

  test('a sweep still running when the next is due is not run twice; stop waits for it', async () => {
    vi.useFakeTimers();
    let finish: (n: number) => void = () => undefined;
    const store = fakeStore(() => new Promise<number>((resolve) => (finish = resolve)));
    const retention = startResponseRetention(store, { retentionDays: 1, now: () => T0, log: quietLog() });
    await vi.advanceTimersByTimeAsync(2 * RESPONSE_SWEEP_INTERVAL_MS);
    expect(store.sweeps).toHaveLength(1);

    let stopped = false;
    const stopping = retention.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish(0);
    await stopping;
    expect(stopped).toBe(true);
  });

  test('retention_days defaults to 30 and must be a whole number of days, at least 1', () => {
    expect(loadConfig({ env: {} }).responses).toEqual({ retention_days: 30 });
    expect(loadConfig({ env: {}, overrides: { responses: { retention_days: 2 } } }).responses).toEqual({ retention_days: 2 });
    expect(() => loadConfig({ env: {}, overrides: { responses: { retention_days: 0 } } })).toThrow(/retention_days/);
    expect(() => loadConfig({ env: {}, overrides: { responses: { retention_days: 1.5 } } })).toThrow(/retention_days/);
  });
});

describe('a gateway started with responses.retention_days', () => {
  test('deletes the responses older than that at start and keeps the others', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-retention-'));
    const path = join(dir, 'agentgw.db');
    const stored = (id: string, ageDays: number): StoredResponse => ({
      id,
      tenant_id: 'acme',
      agent_id: 'agt_1',
      trace_id: 'trace-1',
      request_id: `req_${id}`,
      model: 'openai/gpt-5',
      provider_type: 'openai',
      created_at: new Date(Date.now() - ageDays * DAY).toISOString(),
      input: '[]',
      response: '{}',
    });
    try {
      const seeded = await openStore({ kind: 'sqlite', path, usageThread: false });
      await seeded.putResponse(stored('resp_old', 3));
      await seeded.putResponse(stored('resp_new', 1));
      await seeded.close();

      const gw = await startTestGateway({ sqlitePath: path, config: { responses: { retention_days: 2 } } });
      try {
        await vi.waitFor(async () => expect(await gw.runtime.store.getResponse('resp_old')).toBeUndefined(), { timeout: 5_000 });
        expect(await gw.runtime.store.getResponse('resp_new')).toMatchObject({ id: 'resp_new' });
      } finally {
        await gw.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
