import { afterEach, describe, expect, test, vi } from 'vitest';
import { DEFAULT_RULES, type Policy } from '../contract/index.js';
import { toAgentgwError } from '../http/error-handler.js';
import { Snapshot } from './snapshot.js';
import { isStoreUnavailableError } from './store-errors.js';
import type { Store } from './store.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isStoreUnavailableError: the one place connection faults are recognised', () => {
  test.each([
    ['ECONNREFUSED', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['ECONNRESET', withCode('read ECONNRESET', 'ECONNRESET')],
    ['ETIMEDOUT', withCode('connect ETIMEDOUT', 'ETIMEDOUT')],
    ['57P01 admin_shutdown', withCode('terminating connection due to administrator command', '57P01')],
    ['57P03 cannot_connect_now', withCode('the database system is starting up', '57P03')],
    ['08006 connection_failure', withCode('connection failure', '08006')],
    ['08P01 protocol_violation', withCode('protocol violation', '08P01')],
    ['53300 too_many_connections', withCode('sorry, too many clients already', '53300')],
    ['pg: Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    ['pg: Connection terminated due to connection timeout', new Error('Connection terminated due to connection timeout')],
    ['pg-pool: timeout exceeded when trying to connect', new Error('timeout exceeded when trying to connect')],
    ['pg: not queryable', new Error('Client has encountered a connection error and is not queryable')],
    ['SQLite busy', withCode('database is locked', 'SQLITE_BUSY')],
    ['AggregateError of connect attempts', Object.assign(new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], ''), {})],
  ])('%s is a store outage', (_, err) => {
    expect(isStoreUnavailableError(err)).toBe(true);
  });

  test.each([
    ['unique violation', withCode('duplicate key value violates unique constraint', '23505')],
    ['foreign key violation', withCode('violates foreign key constraint', '23503')],
    ['syntax error', withCode('syntax error at or near', '42601')],
    ['SQLite constraint', withCode('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_UNIQUE')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    // fetch wraps an upstream's refusal in its cause: that is no database fault.
    ['fetch failed (upstream)', new TypeError('fetch failed', { cause: withCode('connect ECONNREFUSED', 'ECONNREFUSED') })],
    ['nothing', undefined],
  ])('%s is not', (_, err) => {
    expect(isStoreUnavailableError(err)).toBe(false);
  });

  test('the error handler answers them with 503 store_unavailable and Retry-After, never 500, and logs no bug', () => {
    const log = { error: vi.fn() };
    const e = toAgentgwError(withCode('terminating connection due to administrator command', '57P01'), log);
    expect(e.status).toBe(503);
    expect(e.toBody().error).toMatchObject({ type: 'service_unavailable', code: 'store_unavailable', param: null });
    expect(Number(e.headers['retry-after'])).toBeGreaterThan(0);
    expect(e.message).toMatch(/retry/i);
    expect(log.error).not.toHaveBeenCalled();
    expect(toAgentgwError(new Error('timeout exceeded when trying to connect')).code).toBe('store_unavailable');
    expect(toAgentgwError(new TypeError('x is undefined'), log).code).toBe('internal_error');
  });
});

describe('the snapshot while the database is away', () => {
  afterEach(() => vi.useRealTimers());

  const policy = (monthly_budget: number): Policy => ({
    id: 'p',
    tenant_id: null,
    monthly_budget,
    daily_budget: null,
    allowed_models: null,
    rules: DEFAULT_RULES,
    labels: {},
    created_at: '2030-01-01T00:00:00.000Z',
    updated_at: '2030-01-01T00:00:00.000Z',
  });

  function flakyStore() {
    const state = { down: false, calls: 0, budget: 1, version: 'v1' };
    const call = async <T>(v: () => T): Promise<T> => {
      state.calls++;
      if (state.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return v();
    };
    const store = {
      getSetting: (k: string) => call(() => (k === 'config_version' ? state.version : undefined)),
      setSetting: () => call(() => undefined),
      settingsWithPrefix: () => call(() => []),
      deleteSetting: () => call(() => undefined),
      allAgents: () => call(() => []),
      recentTraceStops: () => call(() => []),
      allPolicies: () => call(() => [policy(state.budget)]),
      allRoutes: () => call(() => []),
    } as unknown as Store;
    return { store, state };
  }

  test('keeps serving what it holds, backs its polls off, and reloads once the database answers again', async () => {
    vi.useFakeTimers();
    const { store, state } = flakyStore();
    const snapshot = new Snapshot(store);
    await snapshot.start(100);
    expect(snapshot.policy('p')?.monthly_budget).toBe(1);

    state.down = true;
    state.calls = 0;
    await vi.advanceTimersByTimeAsync(10_000);
    // Still answering from memory.
    expect(snapshot.policy('p')?.monthly_budget).toBe(1);
    // Polls backed off to one every 2 s at most (100, 200, 400, 800, 1600, 2000, 2000, ...), not one per 100 ms.
    expect(state.calls).toBeLessThan(12);
    expect(state.calls).toBeGreaterThan(3);

    // Back, with a change made meanwhile under the same version key (restored elsewhere): reloaded all the same.
    state.budget = 2;
    state.down = false;
    await vi.advanceTimersByTimeAsync(2100);
    expect(snapshot.policy('p')?.monthly_budget).toBe(2);

    // And polling is back to its pace: a version bump is picked up within one interval.
    state.budget = 3;
    state.version = 'v2';
    await vi.advanceTimersByTimeAsync(150);
    expect(snapshot.policy('p')?.monthly_budget).toBe(3);
    await snapshot.stop();
  });

  test('a poll the database does not answer is not stacked on by the next', async () => {
    vi.useFakeTimers();
    let pending = 0;
    let maxPending = 0;
    let stall = false;
    const store = {
      getSetting: async (k: string) => {
        if (!stall) return k === 'config_version' ? 'v' : undefined;
        pending++;
        maxPending = Math.max(maxPending, pending);
        await new Promise((r) => setTimeout(r, 2000));
        pending--;
        throw new Error('timeout exceeded when trying to connect');
      },
      setSetting: async () => undefined,
      settingsWithPrefix: async () => [],
      deleteSetting: async () => undefined,
      allAgents: async () => [],
      allPolicies: async () => [],
      allRoutes: async () => [],
      recentTraceStops: async () => [],
    } as unknown as Store;
    const snapshot = new Snapshot(store);
    await snapshot.start(100);
    stall = true;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(maxPending).toBe(1);
    await snapshot.stop();
  });
});
