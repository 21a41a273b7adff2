// Counters and histograms the data plane adds to on every request, as plain numbers: prom-client reads them only when
// /metrics is scraped. prom-client's own inc() and observe() hash the label set and allocate on every call, even on a
// child from labels(); here a request adds to a series it already holds. What /metrics shows is what prom-client would:
// a series appears at its first inc() or observe(), and a reset hides it again until the next one.
// Values that are not finite numbers (and negative counter increments) are dropped: prom-client would throw, and a
// metric must never fail the request it describes.
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

/** One counter series: keep it, add to it. */
/** What a series shares with its family: whether it has been used since the last reset, and how to say it now is. */
abstract class Series {
  touched = false;
  constructor(
    readonly labels: Labels,
    private readonly firstTouch: (s: Series) => void,
  ) {}

  protected touch(): void {
    if (this.touched) return;
    this.touched = true;
    this.firstTouch(this);
  }
}

export class CounterSeries extends Series {
  value = 0;

  inc(by = 1): void {
    if (!(by >= 0) || by === Infinity) return;
    this.value += by;
    this.touch();
  }

  reset(): void {
    this.value = 0;
    this.touched = false;
  }
}

/** One histogram series: a count per bucket (the last is +Inf), a sum and a count. */
export class HistogramSeries extends Series {
  sum = 0;
  count = 0;
  readonly counts: Float64Array;

  constructor(
    labels: Labels,
    firstTouch: (s: Series) => void,
    private readonly upperBounds: readonly number[],
  ) {
    super(labels, firstTouch);
    this.counts = new Float64Array(upperBounds.length + 1);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    const bounds = this.upperBounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
    this.touch();
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
    this.touched = false;
  }
}

interface MetricValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** What prom-client's Registry asks of a metric it renders: name, help, type, get() and reset(). */
abstract class Family<S extends Series & { reset(): void }> {
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

  /** The series of these label values (in labelNames order): keep it; it stays valid across resets. */
  with(...values: string[]): S {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]!));
      // Listed from its first use, like prom-client, which creates a series at its first inc() or observe().
      s = this.create(labels, (used) => {
        this.series.delete(key);
        this.series.set(key, used as S);
      });
      this.series.set(key, s);
    }
    return s;
  }

  protected abstract create(labels: Labels, firstTouch: (s: Series) => void): S;
  protected abstract values(s: S): MetricValue[];

  get(): { name: string; help: string; type: string; aggregator: string; values: MetricValue[] } {
    const values: MetricValue[] = [];
    for (const s of this.series.values()) if (s.touched) values.push(...this.values(s));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const s of this.series.values()) s.reset();
  }
}

export class CounterFamily extends Family<CounterSeries> {
  readonly type = 'counter';

  protected create(labels: Labels, firstTouch: (s: Series) => void): CounterSeries {
    return new CounterSeries(labels, firstTouch);
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

  protected create(labels: Labels, firstTouch: (s: Series) => void): HistogramSeries {
    return new HistogramSeries(labels, firstTouch, this.buckets);
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
