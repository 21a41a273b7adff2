import { describe, expect, it } from 'vitest';
import { Generations } from './generations.js';

describe('Generations', () => {
  it('holds at most two budgets, keeps what is used and drops what is not', () => {
    const g = new Generations<number>(3);
    for (const k of ['a', 'b', 'c']) g.set(k, 1);
    g.set('d', 1); // young full: a, b, c become the old generation
    expect(g.get('a')).toBe(1); // moved up
    g.set('e', 1);
    g.set('f', 1); // young (d, a, e) full: it becomes old, b and c are dropped
    expect(g.has('b')).toBe(false);
    expect(g.has('c')).toBe(false);
    expect(['a', 'd', 'e', 'f'].every((k) => g.has(k))).toBe(true);
  });

  it('counts entries by their own cost', () => {
    const g = new Generations<string>(10, (s) => s.length);
    g.set('x', 'aaaaaa');
    g.set('y', 'bbbbbb'); // 12 > 10: x goes to the old generation
    g.set('z', 'cccccc'); // y goes old, x is dropped
    expect(g.has('x')).toBe(false);
    expect(g.get('y')).toBe('bbbbbb');
    g.clear();
    expect(g.has('y') || g.has('z')).toBe(false);
  });
});
