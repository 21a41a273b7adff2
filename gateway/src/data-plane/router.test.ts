import { describe, expect, test } from 'vitest';
import { AgentgwError } from '../contract/index.js';
import { createMockAdapter } from '../providers/mock/mock-adapter.js';
import type { ProviderAdapter } from '../providers/spec.js';
import { type AliasConfig, Router, attemptOrder } from './router.js';
import { BASE_COOLDOWN_MS, MAX_COOLDOWN_MS } from './route-health.js';

function router(models: Record<string, AliasConfig>): Router {
  const providers = new Map<string, ProviderAdapter>();
  for (const name of ['a', 'b', 'c', 'd']) providers.set(name, createMockAdapter(name, { type: 'mock' }));
  return new Router(providers, models);
}

const T0 = 1_800_000_000_000;
const limited = (retryAfter: string) => new AgentgwError('upstream_rate_limited', 'HTTP 429', { headers: { 'retry-after': retryAfter } });
const down = () => new AgentgwError('upstream_unavailable', 'HTTP 500');

describe('attemptOrder', () => {
  test('weighted: smooth weighted round-robin gives each target its share within 3 points over 2,000 requests, interleaved', () => {
    const r = router({ w: { strategy: 'weighted', targets: [{ model: 'a/m', weight: 5 }, { model: 'b/m', weight: 3 }, { model: 'c/m', weight: 2 }] } });
    const targets = r.resolve('w');
    const counts: Record<string, number> = {};
    const firstTen: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const first = attemptOrder(targets, T0, 0)[0]!.id;
      counts[first] = (counts[first] ?? 0) + 1;
      if (i < 10) firstTen.push(first);
    }
    expect(Math.abs(counts['a/m']! / 2000 - 0.5)).toBeLessThanOrEqual(0.03);
    expect(Math.abs(counts['b/m']! / 2000 - 0.3)).toBeLessThanOrEqual(0.03);
    expect(Math.abs(counts['c/m']! / 2000 - 0.2)).toBeLessThanOrEqual(0.03);
    // Smooth: never the same heavy target five times in a row, as plain weighted round-robin would.
    expect(firstTen).toEqual(['a/m', 'b/m', 'c/m', 'a/m', 'a/m', 'b/m', 'a/m', 'c/m', 'b/m', 'a/m']);
  });

  test('the other targets follow the chosen one, so a failure falls over within the request', () => {
    const r = router({ w: { strategy: 'weighted', targets: [{ model: 'a/m', weight: 1 }, { model: 'b/m', weight: 1 }] } });
    const order = attemptOrder(r.resolve('w'), T0, 0).map((t) => t.id);
    expect(order.sort()).toEqual(['a/m', 'b/m']);
  });

  test('fallback keeps the configured order; plain lists are fallback routes', () => {
    const r = router({ f: ['b/m', 'a/m', 'c/m'] });
    expect(attemptOrder(r.resolve('f'), T0, 0).map((t) => t.id)).toEqual(['b/m', 'a/m', 'c/m']);
  });

  test('a lower priority group is used only when every target of the group above is unavailable', () => {
    const r = router({ p: { strategy: 'weighted', targets: [{ model: 'c/m', priority: 1 }, { model: 'a/m' }, { model: 'b/m' }] } });
    const targets = r.resolve('p');
    for (let i = 0; i < 10; i++) expect(attemptOrder(targets, T0, 0).slice(0, 2).map((t) => t.id).sort()).toEqual(['a/m', 'b/m']);
    r.health.of('a/m').failed(down(), T0);
    expect(attemptOrder(targets, T0, 0).map((t) => t.id)).toEqual(['b/m', 'c/m']);
    r.health.of('b/m').failed(down(), T0);
    expect(attemptOrder(targets, T0, 0).map((t) => t.id)).toEqual(['c/m']);
  });

  test('least_busy puts the target with the fewest requests in flight first', () => {
    const r = router({ l: { strategy: 'least_busy', targets: ['a/m', 'b/m', 'c/m'] } });
    r.health.of('a/m').begin(T0, 0);
    r.health.of('a/m').begin(T0, 0);
    r.health.of('b/m').begin(T0, 0);
    expect(attemptOrder(r.resolve('l'), T0, 0).map((t) => t.id)).toEqual(['c/m', 'b/m', 'a/m']);
  });

  test('latency: unmeasured targets first, then the fastest most of the time, the others now and then', () => {
    const r = router({ l: { strategy: 'latency', targets: ['a/m', 'b/m'] } });
    const a = r.health.of('a/m');
    const b = r.health.of('b/m');
    a.begin(T0, 0);
    a.succeeded(900);
    const noExploring = () => 0.5;
    expect(attemptOrder(r.resolve('l'), T0, 0, noExploring)[0]!.id).toBe('b/m');
    b.begin(T0, 0);
    b.succeeded(100);
    expect(attemptOrder(r.resolve('l'), T0, 0, noExploring).map((t) => t.id)).toEqual(['b/m', 'a/m']);
    // About one request in ten sends a slower target first (draws spread evenly over [0, 1) here).
    let draw = 0;
    const spread = () => ((draw++ * 37) % 100) / 100;
    let fastFirst = 0;
    for (let i = 0; i < 1000; i++) if (attemptOrder(r.resolve('l'), T0, 0, spread)[0]!.id === 'b/m') fastFirst++;
    expect(fastFirst).toBeGreaterThan(850);
    expect(fastFirst).toBeLessThan(950);
  });

  test("a 429 cools the target down until its Retry-After ends, then exactly one probe goes", () => {
    const r = router({ f: ['a/m', 'b/m'] });
    const targets = r.resolve('f');
    const a = r.health.of('a/m');
    a.begin(T0, 0);
    a.failed(limited('30'), T0);
    expect(a.state(T0)).toBe('cooling_down');
    expect(attemptOrder(targets, T0 + 29_999, 0).map((t) => t.id)).toEqual(['b/m']);
    expect(attemptOrder(targets, T0 + 30_000, 0).map((t) => t.id)).toEqual(['a/m', 'b/m']);
    a.begin(T0 + 30_000, 0);
    expect(a.state(T0 + 30_000)).toBe('probing');
    // While the probe is out, nobody else is sent there.
    expect(attemptOrder(targets, T0 + 30_001, 0).map((t) => t.id)).toEqual(['b/m']);
    a.succeeded(50);
    expect(a.state(T0 + 30_002)).toBe('healthy');
    expect(attemptOrder(targets, T0 + 30_002, 0).map((t) => t.id)).toEqual(['a/m', 'b/m']);
  });

  test('failures without Retry-After back off from a few seconds, doubling up to a minute; a success resets it', () => {
    const r = router({ f: ['a/m'] });
    const a = r.health.of('a/m');
    let now = T0;
    const cooldowns: number[] = [];
    for (let i = 0; i < 7; i++) {
      a.begin(now, 0);
      cooldowns.push(a.failed(down(), now) - now);
      now = a.cooldownUntil;
    }
    expect(cooldowns).toEqual([BASE_COOLDOWN_MS, 10_000, 20_000, 40_000, MAX_COOLDOWN_MS, MAX_COOLDOWN_MS, MAX_COOLDOWN_MS]);
    a.begin(now, 0);
    a.succeeded(10);
    a.begin(now, 0);
    expect(a.failed(down(), now) - now).toBe(BASE_COOLDOWN_MS);
  });

  test('a refused request (400) does not cool the target down', () => {
    const r = router({ f: ['a/m'] });
    const a = r.health.of('a/m');
    a.begin(T0, 0);
    expect(a.failed(new AgentgwError('validation_failed', 'bad'), T0)).toBe(0);
    expect(a.state(T0)).toBe('healthy');
  });

  test('every target cooling down or over its own rpm: 429 upstream_rate_limited with Retry-After at the earliest end', () => {
    const r = router({ f: ['a/m', { model: 'b/m', rpm: 2 }] });
    const targets = r.resolve('f');
    r.health.of('a/m').failed(limited('120'), T0);
    const b = r.health.of('b/m');
    b.begin(T0, 0);
    b.succeeded(1);
    b.begin(T0, 0);
    b.succeeded(1);
    const minuteEnd = (Math.floor(T0 / 60_000) + 1) * 60_000;
    try {
      attemptOrder(targets, T0, 0);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(AgentgwError);
      expect((e as AgentgwError).code).toBe('upstream_rate_limited');
      expect((e as AgentgwError).headers['retry-after']).toBe(String(Math.ceil((minuteEnd - T0) / 1000)));
    }
  });

  test("a target's own tpm leaves it out once the minute's tokens would pass it", () => {
    const r = router({ f: [{ model: 'a/m', tpm: 1000 }, 'b/m'] });
    const targets = r.resolve('f');
    r.health.of('a/m').begin(T0, 800);
    expect(attemptOrder(targets, T0, 300).map((t) => t.id)).toEqual(['b/m']);
    expect(attemptOrder(targets, T0, 200).map((t) => t.id)).toEqual(['a/m', 'b/m']);
  });

  test('aliases routing to one deployment share its health', () => {
    const r = router({ x: ['a/m', 'b/m'], y: ['a/m', 'c/m'] });
    r.health.of('a/m').failed(down(), T0);
    expect(attemptOrder(r.resolve('y'), T0, 0).map((t) => t.id)).toEqual(['c/m']);
    expect(attemptOrder(r.resolve('a/m'), T0 + BASE_COOLDOWN_MS, 0).map((t) => t.id)).toEqual(['a/m']);
  });
});

describe('stored routes (written through the admin interface)', () => {
  const stored = (alias: string, strategy: 'fallback' | 'weighted', targets: Array<{ model: string; weight?: number; priority?: number; rpm?: number | null }>) => ({
    alias,
    strategy,
    targets: targets.map((t) => ({ weight: 1, priority: 0, rpm: null, tpm: null, ...t })),
  });

  test('route as config aliases do: strategy, weights, priorities, own quota, and the health shared with every alias of a deployment', () => {
    const r = router({ cfg: ['a/m'] });
    r.setStoredRoutes([stored('w', 'weighted', [{ model: 'a/m', weight: 3 }, { model: 'b/m', weight: 1, rpm: 10 }, { model: 'c/m', priority: 1 }])]);
    const targets = r.resolve('w');
    expect(targets.map((t) => [t.id, t.strategy, t.weight, t.priority, t.rpm])).toEqual([
      ['a/m', 'weighted', 3, 0, undefined],
      ['b/m', 'weighted', 1, 0, 10],
      ['c/m', 'weighted', 1, 1, undefined],
    ]);
    const counts: Record<string, number> = {};
    for (let i = 0; i < 400; i++) {
      const first = attemptOrder(targets, T0, 0)[0]!.id;
      counts[first] = (counts[first] ?? 0) + 1;
    }
    expect(counts).toEqual({ 'a/m': 300, 'b/m': 100 });
    expect(targets[0]!.health).toBe(r.resolve('cfg')[0]!.health);
  });

  test('a key pool of the provider is used by stored routes too', () => {
    const providers = new Map<string, ProviderAdapter>([['a', createMockAdapter('a', { type: 'mock' })]]);
    const pool = [createMockAdapter('a', { type: 'mock' }), createMockAdapter('a', { type: 'mock' })];
    const r = new Router(providers, {}, undefined, new Map([['a', pool]]));
    r.setStoredRoutes([stored('pooled', 'fallback', [{ model: 'a/m' }])]);
    expect(r.resolve('pooled')[0]!.keys?.map((k) => k.index)).toEqual([0, 1]);
  });

  test('globs match after exact aliases and provider/model; a reload replaces them; config aliases are never shadowed', () => {
    const r = router({ fixed: ['a/m'] });
    r.setStoredRoutes([stored('team/*', 'fallback', [{ model: 'b/m' }]), stored('fixed', 'fallback', [{ model: 'c/m' }]), stored('a/m', 'fallback', [{ model: 'd/m' }])]);
    expect(r.resolve('team/x').map((t) => t.id)).toEqual(['b/m']);
    expect(r.resolve('fixed').map((t) => t.id)).toEqual(['a/m']);
    // An exact alias is looked up before provider/model, as a config alias is.
    expect(r.resolve('a/m').map((t) => t.id)).toEqual(['d/m']);
    r.setStoredRoutes([]);
    expect(() => r.resolve('team/x')).toThrow(/not known/);
    expect(r.resolve('a/m').map((t) => t.id)).toEqual(['a/m']);
  });

  test('a stored route whose providers are all gone answers unknown_model, saying so', () => {
    const r = router({});
    r.setStoredRoutes([stored('orphan', 'fallback', [{ model: 'gone/m' }])]);
    expect(() => r.resolve('orphan')).toThrow(/routes only to providers this server does not configure/);
    expect(r.listModels().map((m) => m.id)).not.toContain('orphan');
  });
});
