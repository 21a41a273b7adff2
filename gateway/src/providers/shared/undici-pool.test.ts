import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as undici from 'undici';
import { describe, expect, test } from 'vitest';
import { Pool, request } from './undici-pool.js';

describe('undici modules loaded by path', () => {
  test('the pool is the class the package index exports', async () => {
    expect(Pool).toBe(undici.Pool);
    const pool = new Pool('http://127.0.0.1:9');
    expect(pool).toBeInstanceOf(undici.Dispatcher);
    await pool.close();
  });

  test('request() is the method the index gives every dispatcher, and works on a pool', async () => {
    const { default: apiRequest } = await import('undici/lib/api/api-request.js');
    expect(apiRequest).toBe(undici.Dispatcher.prototype.request);
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ method: req.method, path: req.url }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const res = await request(pool, { path: '/v1/x', method: 'POST', body: '{}' });
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toEqual({ method: 'POST', path: '/v1/x' });
    } finally {
      await pool.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
