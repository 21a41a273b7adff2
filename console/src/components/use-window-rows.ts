import { type RefObject, useEffect, useState } from 'react';

export interface RowWindow {
  /** First and one-past-last row drawn. */
  start: number;
  end: number;
  /** Space kept for the rows above and below them. */
  before: number;
  after: number;
}

const OVERSCAN = 15;

/**
 * The rows of a long list that the window shows (the page scrolls, not the list), for lists whose rows all have the
 * same height; one open row may be taller by `extra` pixels. Off: every row.
 */
export function useWindowRows(
  list: RefObject<HTMLElement | null>,
  on: boolean,
  count: number,
  rowHeight: number,
  extra: { index: number; height: number } | null,
): RowWindow {
  const [range, setRange] = useState({ start: 0, end: Math.min(count, 60) });

  useEffect(() => {
    if (!on) return;
    let frame = 0;
    const measure = () => {
      frame = 0;
      const el = list.current;
      if (!el) return;
      const top = el.getBoundingClientRect().top; // the list's top relative to the viewport
      const rowAt = (y: number) => {
        if (extra && y > (extra.index + 1) * rowHeight) y = Math.max((extra.index + 1) * rowHeight, y - extra.height);
        return Math.floor(y / rowHeight);
      };
      const start = Math.max(0, rowAt(-top) - OVERSCAN);
      const end = Math.min(count, rowAt(window.innerHeight - top) + 1 + OVERSCAN);
      setRange((r) => (r.start === start && r.end === end ? r : { start, end: Math.max(end, start) }));
    };
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(measure);
    };
    measure();
    window.addEventListener('scroll', schedule, { passive: true });
    window.addEventListener('resize', schedule);
    return () => {
      cancelAnimationFrame(frame);
      window.removeEventListener('scroll', schedule);
      window.removeEventListener('resize', schedule);
    };
  }, [list, on, count, rowHeight, extra?.index, extra?.height]);

  if (!on) return { start: 0, end: count, before: 0, after: 0 };
  const start = Math.min(range.start, count);
  const end = Math.min(range.end, count);
  const extraAbove = extra && extra.index < start ? extra.height : 0;
  const extraBelow = extra && extra.index >= end ? extra.height : 0;
  return { start, end, before: start * rowHeight + extraAbove, after: (count - end) * rowHeight + extraBelow };
}
