/** Types for parse-prometheus-text-format 1.1 (a dev dependency of the tests; the package ships none). */
declare module 'parse-prometheus-text-format' {
  /**
   * One sample, every value as the text it was written with. A plain sample has `value`; a summary or histogram
   * without labels is folded into one sample with `quantiles` or `buckets` (keyed by quantile or `le`), `count` and
   * `sum`; a labelled one keeps a sample per line, with `count`, `sum` or `bucket` in place of `value`.
   */
  export interface PrometheusSample {
    value?: string;
    labels?: Record<string, string>;
    timestamp_ms?: string;
    count?: string;
    sum?: string;
    bucket?: string;
    buckets?: Record<string, string>;
    quantiles?: Record<string, string>;
  }

  export interface PrometheusMetricFamily {
    name: string;
    /** '' when the text has no HELP line. */
    help: string;
    /** The TYPE line's word upper-cased (COUNTER, GAUGE, HISTOGRAM, SUMMARY), or UNTYPED. */
    type: string;
    metrics: PrometheusSample[];
  }

  export default function parsePrometheusTextFormat(text: string): PrometheusMetricFamily[];
}
