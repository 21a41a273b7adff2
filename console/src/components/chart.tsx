import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { int, time } from '../format';

export interface Series {
  label: string;
  color: string;
  values: number[];
  /** Drawn as bars instead of a line. */
  bars?: boolean;
}

/** A time chart (uPlot): x in Unix seconds, one y axis; follows its container's width. */
export function TimeChart(props: { xs: number[]; series: Series[]; height?: number; testId?: string; /** Seconds between points: bars get half of it either side. */ step?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const bars = uPlot.paths.bars?.({ size: [0.6, 40] });
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: props.height ?? 220,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true, range: (_u, min, max) => [min - (props.step ?? 0) / 2, max + (props.step ?? 0) / 2] } },
      axes: [{ stroke: '#5b6478', grid: { stroke: '#eef0f4' } }, { stroke: '#5b6478', grid: { stroke: '#eef0f4' }, size: 48 }],
      // The legend reads the point under the cursor, and the whole period's totals when there is none (never "--").
      series: [
        { label: 'Time', value: (_u: uPlot, v: number | null) => (v == null ? 'whole period' : time(new Date(v * 1000).toISOString())) },
        ...props.series.map((s) => ({
          label: s.label,
          value: (_u: uPlot, v: number | null) => (v == null ? `${int(s.values.reduce((a, b) => a + b, 0))} in all` : int(v)),
          stroke: s.color,
          width: 2,
          fill: s.bars ? `${s.color}55` : undefined,
          paths: s.bars ? bars : undefined,
          points: { show: !s.bars },
        })),
      ],
    };
    const u = new uPlot(opts, [props.xs, ...props.series.map((s) => s.values)], el);
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height: props.height ?? 220 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [props.xs, props.series, props.height, props.step]);

  return <div ref={box} className="chart" data-testid={props.testId} />;
}
