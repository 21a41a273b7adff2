import { describe, expect, it } from 'vitest';
import { NO_TEXT_MEMBERS, visitAll } from './walk-all.js';

const visited = (value: unknown): string[] => {
  const out: string[] = [];
  visitAll({ v: value }, 'v', (text) => (out.push(text), undefined), 'f');
  return out;
};

describe('visitAll', () => {
  it('skips only the members listed as holding no text: adding one is a decision made here', () => {
    expect(Object.fromEntries(NO_TEXT_MEMBERS)).toEqual({
      thinking: ['thinking', 'signature'],
      redacted_thinking: ['data'],
      reasoning: ['encrypted_content'],
      compaction: ['encrypted_content'],
      base64: ['data'],
      image: ['data'],
      audio: ['data'],
      image_generation_call: ['result'],
    });
  });

  it('reads every string, long number and client-named key at any depth, and none of the skipped members', () => {
    let deep: unknown = { 'jane@example.com': 4155552671, n: 12, text: 'hello' };
    for (let i = 0; i < 10_000; i++) deep = i % 2 ? [deep] : { content: deep };
    expect(visited(deep).sort()).toEqual(['4155552671', 'hello', 'jane@example.com']);
    expect(visited({ type: 'thinking', thinking: 'secret thoughts', signature: 'sig', extra: 'read me' }).sort()).toEqual(['extra', 'read me']);
    expect(visited({ type: 'constructor', text: 'read me' }).sort()).toEqual(['read me']);
    expect(visited({ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } })).toEqual([]);
    expect(visited({ type: 'image_url', image_url: { url: 'https://x.io/?u=a' } })).toEqual(['https://x.io/?u=a']);
    expect(visited({ type: 'Not An Enum', role: 'user' })).toEqual(['Not An Enum']);
  });

  it('renames a key that a visitor replaces, __proto__ included, keeping it an own property', () => {
    const holder = JSON.parse('{"v":{"__proto__":{"x@example.com":"y"}}}') as Record<string, any>;
    visitAll(holder, 'v', (text) => text.replace('x@example.com', 'R').replace('__proto__', 'P'), 'f');
    expect(JSON.stringify(holder)).toBe('{"v":{"P":{"R":"y"}}}');
    expect(Object.getPrototypeOf(holder.v)).toBe(Object.prototype);
  });
});
