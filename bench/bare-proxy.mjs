// The ceiling for a Node gateway on this machine: node:http in, an undici keep-alive Pool out, bodies piped both ways,
// no parsing, no checks, no accounting. Run as its own process, like the gateway.
import { createServer } from 'node:http';
import { pipeline } from 'node:stream';
import { Pool } from 'undici';

const upstream = process.env.BENCH_UPSTREAM;
if (!upstream) throw new Error('BENCH_UPSTREAM is not set');
const pool = new Pool(upstream, { connections: 128, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 });

// Hop-by-hop headers are the connection's own business, never forwarded.
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-connection', 'host']);

function forwardable(headers) {
  const out = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP.has(k)) out[k] = v;
  return out;
}

const server = createServer((req, res) => {
  pool.request(
    { path: req.url, method: req.method, headers: forwardable(req.headers), body: req.method === 'GET' || req.method === 'HEAD' ? null : req },
    (err, up) => {
      if (err) {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
        res.end(`{"error":{"message":"bare proxy: ${String(err.message).replace(/"/g, "'")}","type":"upstream_error","code":"upstream_unavailable","param":null}}`);
        return;
      }
      res.writeHead(up.statusCode, forwardable(up.headers));
      pipeline(up.body, res, () => undefined);
    },
  );
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
