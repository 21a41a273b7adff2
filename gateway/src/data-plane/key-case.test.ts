import { describe, expect, it } from 'vitest';
import { checkKeyCase } from './key-case.js';

const paramOf = (body: Record<string, unknown>) => {
  try {
    checkKeyCase(body);
  } catch (err) {
    return (err as { param?: string }).param;
  }
  return undefined;
};

describe('the case rule names the refused key by its path', () => {
  it('through objects and list elements', () => {
    expect(paramOf({ messages: [{ role: 'user', Content: 'x' }] })).toBe('messages.0.Content');
    expect(paramOf({ Model: 'm' })).toBe('Model');
    expect(paramOf({ messages: [{ role: 'user', content: 'x' }] })).toBeUndefined();
  });

  it('under a member named by the empty string, as the path has always been written (an empty path takes the next name alone)', () => {
    expect(paramOf({ '': { Content: 'x' } })).toBe('Content');
    expect(paramOf({ '': [{ Content: 'x' }] })).toBe('0.Content');
    expect(paramOf({ a: { '': { Content: 'x' } } })).toBe('a..Content');
  });
});
