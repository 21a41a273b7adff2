import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CounterFamily, HistogramFamily } from './series.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** prom-client's own Counter and Histogram are the reference: the same calls must render the same text. */
describe('CounterFamily and HistogramFamily render as prom-client does', () => {
  it('for any sequence of observations and increments over a few label sets', async () => {
    const event = fc.record({
      provider: fc.constantFrom('openai', 'anthropic', 'p"q\\r'),
      code: fc.constantFrom('none', 'upstream_timeout'),
      seconds: fc.oneof(fc.constantFrom(...BUCKETS, 0, 60, 1e9), fc.double({ min: 0, max: 20, noNaN: true })),
      tokens: fc.nat({ max: 10_000 }),
      // A series looked up but not used this time, as Metrics does for each provider; now and then, a reset.
      action: fc.constantFrom('observe', 'observe', 'observe', 'lookup', 'reset'),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 40 }), async (events) => {
        const ours = new Registry();
        const theirs = new Registry();
        const h = new HistogramFamily('t_seconds', 'Latency.', ['provider'], BUCKETS, ours);
        const c = new CounterFamily('t_total', 'Things.', ['provider', 'code'], ours);
        const rh = new Histogram({ name: 't_seconds', help: 'Latency.', labelNames: ['provider'], buckets: BUCKETS, registers: [theirs] });
        const rc = new Counter({ name: 't_total', help: 'Things.', labelNames: ['provider', 'code'], registers: [theirs] });
        const held = new Map<string, ReturnType<typeof h.with>>();
        for (const e of events) {
          if (e.action === 'reset') {
            ours.resetMetrics();
            theirs.resetMetrics();
            continue;
          }
          // Series are kept and reused, as Metrics keeps them: a reset must not orphan them.
          const series = held.get(e.provider) ?? h.with(e.provider);
          held.set(e.provider, series);
          if (e.action === 'lookup') {
            c.with(e.provider, e.code);
            continue;
          }
          series.observe(e.seconds);
          rh.labels(e.provider).observe(e.seconds);
          if (e.tokens > 0) {
            c.with(e.provider, e.code).inc(e.tokens);
            rc.labels(e.provider, e.code).inc(e.tokens);
          }
        }
        expect(await ours.metrics()).toBe(await theirs.metrics());
      }),
      { numRuns: 200 },
    );
  });

  it('a family with no series still renders its HELP and TYPE lines, and reset() empties it', async () => {
    const registry = new Registry();
    const c = new CounterFamily('x_total', 'X.', ['code'], registry);
    expect(await registry.metrics()).toBe('# HELP x_total X.\n# TYPE x_total counter\n');
    c.with('a').inc(2);
    expect(await registry.metrics()).toContain('x_total{code="a"} 2');
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('code="a"');
  });
});
