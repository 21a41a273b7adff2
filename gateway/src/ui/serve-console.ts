import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AgentgwError } from '../contract/index.js';

/** console/dist beside this package, from gateway/src/ui (tests) and gateway/dist/ui (built) alike. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

export interface ConsoleOptions {
  enabled: boolean;
  /** The built console; console/dist by default. */
  dir?: string;
}

/** The console talks only to its own origin's /api; no inline script or style, no frames, no plugins. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt', '.map']);

/** scripts/build.mjs names what it writes under assets/ by content hash: those files never change under their name. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

interface Loaded {
  mtimeMs: number;
  size: number;
  body: Buffer;
  gzip: Buffer | null;
}

/**
 * `GET /` points a newcomer somewhere useful instead of a 404: a browser (or anything) is sent to the console at /ui,
 * and the body names the three addresses for a client that does not follow redirects. With the console off, the same
 * answer is a 200 naming /api and /v1.
 */
export function rootRoute(app: FastifyInstance, consoleEnabled: boolean): void {
  app.get('/', { schema: { hide: true } }, async (_req, reply) => {
    const body = {
      service: 'agentgw',
      console: consoleEnabled ? '/ui' : null,
      admin: '/api',
      gateway: '/v1',
      health: '/healthz',
    };
    if (consoleEnabled) return reply.code(302).header('location', '/ui/').send(body);
    return reply.send(body);
  });
}

/** Serves the built console at /ui: its files, and index.html for every client route (/ui/traces/abc). */
export async function consolePlugin(app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  if (!opts.enabled) return;
  const dir = resolve(opts.dir ?? CONSOLE_DIST);
  const cache = new Map<string, Loaded>();

  async function load(path: string): Promise<Loaded | null> {
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) return null;
    const hit = cache.get(path);
    if (hit && hit.mtimeMs === info.mtimeMs && hit.size === info.size) return hit;
    const body = await readFile(path);
    const loaded = { mtimeMs: info.mtimeMs, size: info.size, body, gzip: COMPRESSIBLE.has(extname(path)) && body.length > 1024 ? gzipSync(body) : null };
    cache.set(path, loaded);
    return loaded;
  }

  /** The file a path under /ui names, or null when it names none (or tries to leave the console's folder). */
  function fileOf(rel: string): string | null {
    let decoded: string;
    try {
      decoded = decodeURIComponent(rel);
    } catch {
      return null;
    }
    if (decoded === '' || decoded.includes('\0') || decoded.split('/').some((seg) => seg.startsWith('.'))) return null;
    const path = resolve(dir, decoded);
    return path.startsWith(dir + sep) ? path : null;
  }

  async function serve(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    // The raw path after /ui/, decoded once below (the route's own parameter is decoded already).
    const rel = req.url.split('?')[0]!.replace(/^\/ui\/?/, '');
    const index = await load(resolve(dir, 'index.html'));
    if (!index) {
      throw new AgentgwError('route_not_found', 'The console is not built: run `npm run build` (it builds console/ too), then reload /ui.');
    }
    const path = fileOf(rel);
    let file = path ? await load(path) : null;
    let name = path ?? 'index.html';
    if (!file) {
      // A missing file (a stale asset, a typo) is a 404; any other path is a client route that index.html draws.
      if (rel.startsWith('assets/') || /\.[A-Za-z0-9]+$/.test(rel)) {
        throw new AgentgwError('route_not_found', `The console has no file ${rel}: reload /ui to fetch the current build.`);
      }
      file = index;
      name = 'index.html';
    }
    const ext = extname(name);
    const etag = `W/"${file.size.toString(16)}-${Math.floor(file.mtimeMs).toString(16)}"`;
    reply
      .header('content-type', TYPES[ext] ?? 'application/octet-stream')
      .header('cache-control', rel.startsWith('assets/') && file !== index ? IMMUTABLE : 'no-cache')
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('etag', etag);
    if (file.gzip) reply.header('vary', 'Accept-Encoding');
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    if (file.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      return reply.header('content-encoding', 'gzip').send(file.gzip);
    }
    return reply.send(file.body);
  }

  app.get('/ui', { schema: { hide: true } }, serve);
  app.get('/ui/*', { schema: { hide: true } }, serve);
}
