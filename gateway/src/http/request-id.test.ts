import { expect, test } from 'vitest';
import { newRequestId } from './request-id.js';

test('request ids are unique and sort in time order', () => {
  const ids = Array.from({ length: 20_000 }, (_, i) => newRequestId(1_795_000_000_000 + Math.floor(i / 100)));
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of ids) expect(id).toMatch(/^req_[0-9a-z]{13}[0-9a-f]{16}$/);
  const byTime = ids.filter((_, i) => i % 100 === 0);
  expect([...byTime].sort()).toEqual(byTime);
});
