import * as undici from 'undici';
import { describe, expect, test } from 'vitest';
import { Pool } from './undici-pool.js';

describe('undici pool import', () => {
  test('the pool loaded by path is the class the package index exports', async () => {
    expect(Pool).toBe(undici.Pool);
    const pool = new Pool('http://127.0.0.1:9');
    expect(pool).toBeInstanceOf(undici.Dispatcher);
    await pool.close();
  });
});
