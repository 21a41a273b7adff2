// Counters and histograms the data plane adds to on every request, as plain numbers: prom-client reads them only when
// /metrics is scraped. prom-client's own inc() and observe() hash the label set and allocate on every call, even on a
// child from labels(); here a request adds to a series it already holds.
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

/** One counter series: keep it, add to it. */
export class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}

  inc(by = 1): void {
    this.value += by;
  }
}

/** One histogram series: a count per bucket (the last is +Inf), a sum and a count. */
export class HistogramSeries {
  sum = 0;
  count = 0;
  readonly counts: Float64Array;

  constructor(
    readonly labels: Labels,
    private readonly upperBounds: readonly number[],
  ) {
    this.counts = new Float64Array(upperBounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.upperBounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

interface MetricValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** What prom-client's Registry asks of a metric it renders: name, help, type, get() and reset(). */
abstract class Family<S extends { labels: Labels }> {
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  private readonly series = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of these label values (in labelNames order), created at first use. */
  with(...values: string[]): S {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]!));
      s = this.create(labels);
      this.series.set(key, s);
    }
    return s;
  }

  protected abstract create(labels: Labels): S;
  protected abstract values(s: S): MetricValue[];

  get(): { name: string; help: string; type: string; aggregator: string; values: MetricValue[] } {
    const values: MetricValue[] = [];
    for (const s of this.series.values()) values.push(...this.values(s));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}

export class CounterFamily extends Family<CounterSeries> {
  readonly type = 'counter';

  protected create(labels: Labels): CounterSeries {
    return new CounterSeries(labels);
  }

  protected values(s: CounterSeries): MetricValue[] {
    return [{ labels: s.labels, value: s.value }];
  }
}

export class HistogramFamily extends Family<HistogramSeries> {
  readonly type = 'histogram';

  constructor(name: string, help: string, labelNames: readonly string[], readonly buckets: readonly number[], registry: Registry) {
    super(name, help, labelNames, registry);
  }

  protected create(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.buckets);
  }

  protected values(s: HistogramSeries): MetricValue[] {
    const out: MetricValue[] = [];
    let cumulative = 0;
    for (let i = 0; i <= this.buckets.length; i++) {
      cumulative += s.counts[i]!;
      const le = i < this.buckets.length ? String(this.buckets[i]) : '+Inf';
      out.push({ metricName: `${this.name}_bucket`, labels: { le, ...s.labels }, value: cumulative });
    }
    out.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
    out.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    return out;
  }
}
