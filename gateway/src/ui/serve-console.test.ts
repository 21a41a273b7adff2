import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { registerErrorHandling } from '../http/error-handler.js';
import { startTestGateway } from '../test-support/gateway.js';
import { CONSOLE_CSP, consolePlugin } from './serve-console.js';

const INDEX = '<!doctype html><html><head><script type="module" src="/ui/assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});`;

async function appFor(dir: string, enabled = true): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
  registerErrorHandling(app);
  await app.register(consolePlugin, { enabled, dir });
  await app.ready();
  return app;
}

describe('serving the built console at /ui', () => {
  let root: string;
  let dir: string;
  let app: FastifyInstance;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'agentgw-console-'));
    dir = join(root, 'dist');
    mkdirSync(join(dir, 'assets'), { recursive: true });
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), SCRIPT);
    writeFileSync(join(dir, '.env'), 'SECRET=1');
    writeFileSync(join(root, 'outside.txt'), 'not the console');
    app = await appFor(dir);
  });
  afterAll(async () => {
    await app?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test('index.html is never cached and carries the Content-Security-Policy', async () => {
    for (const url of ['/ui', '/ui/']) {
      const r = await app.inject({ url });
      expect(r.statusCode, url).toBe(200);
      expect(r.body).toBe(INDEX);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.headers['cache-control']).toBe('no-cache');
      expect(r.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(r.headers['x-content-type-options']).toBe('nosniff');
    }
    expect(CONSOLE_CSP).toContain("default-src 'self'");
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    expect(CONSOLE_CSP).not.toContain('unsafe-eval');
  });

  test('hashed assets are immutable, gzipped for clients that ask, and revalidated by ETag', async () => {
    const r = await app.inject({ url: '/ui/assets/index-abc123.js', headers: { 'accept-encoding': 'gzip, br' } });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers.vary).toBe('Accept-Encoding');
    expect(gunzipSync(r.rawPayload).toString()).toBe(SCRIPT);
    const plain = await app.inject({ url: '/ui/assets/index-abc123.js' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(SCRIPT);
    const again = await app.inject({ url: '/ui/assets/index-abc123.js', headers: { 'if-none-match': String(r.headers.etag) } });
    expect(again.statusCode).toBe(304);
    const icon = await app.inject({ url: '/ui/favicon.svg' });
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.headers['cache-control']).toBe('no-cache');
  });

  test('client routes get index.html; a missing file is a 404, never index.html', async () => {
    for (const url of ['/ui/traces', '/ui/trace?id=run.1&tenant=acme', '/ui/agents?agent=agt_1', '/ui/no/such/page']) {
      const r = await app.inject({ url });
      expect(r.statusCode, url).toBe(200);
      expect(r.body, url).toBe(INDEX);
    }
    for (const url of ['/ui/assets/index-old999.js', '/ui/missing.css', '/ui/assets/']) {
      const r = await app.inject({ url });
      expect(r.statusCode, url).toBe(404);
      expect(r.json().error.code, url).toBe('route_not_found');
    }
  });

  test('nothing outside the console folder, and no dot files', async () => {
    for (const url of ['/ui/../outside.txt', '/ui/%2e%2e/outside.txt', '/ui/assets/..%2f..%2foutside.txt', '/ui/.env', '/ui/%2eenv']) {
      const r = await app.inject({ url });
      expect(r.body, url).not.toContain('not the console');
      expect(r.body, url).not.toContain('SECRET');
    }
  });

  test('an unbuilt console is a 404 saying how to build it', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'agentgw-console-empty-'));
    const bare = await appFor(empty);
    try {
      const r = await bare.inject({ url: '/ui/' });
      expect(r.statusCode).toBe(404);
      expect(r.json().error).toMatchObject({ code: 'route_not_found', type: 'not_found' });
      expect(r.json().error.message).toContain('npm run build');
    } finally {
      await bare.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('the console switch (console.enabled in agentgw.yaml)', () => {
  test('on by default, and GET / redirects to it; off leaves /ui unanswered while / names /api and /v1', async () => {
    const on = await startTestGateway();
    const off = await startTestGateway({ config: { console: { enabled: false } } });
    try {
      expect(on.runtime.config.console.enabled).toBe(true);
      // GET / points to the console (a redirect to /ui) and names the other addresses for clients that do not follow it.
      const root = await fetch(`${on.url}/`, { redirect: 'manual' });
      expect(root.status).toBe(302);
      expect(root.headers.get('location')).toBe('/ui/');
      expect(await root.json()).toMatchObject({ console: '/ui', admin: '/api', gateway: '/v1' });
      const followed = await fetch(`${on.url}/`);
      expect(followed.url).toBe(`${on.url}/ui/`);
      // With the console off, / still answers (200) naming /api and /v1, and no /ui.
      const rootOff = await fetch(`${off.url}/`, { redirect: 'manual' });
      expect(rootOff.status).toBe(200);
      expect(await rootOff.json()).toMatchObject({ console: null, admin: '/api', gateway: '/v1' });
      const r = await fetch(`${off.url}/ui/`);
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('route_not_found');
      expect((await fetch(`${off.adminUrl}/me`, { headers: { authorization: `Bearer ${off.adminKey}` } })).status).toBe(200);
    } finally {
      await on.close();
      await off.close();
    }
  });
});
