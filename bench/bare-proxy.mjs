// The ceiling for a Node gateway on this machine: node:http in, an undici keep-alive Pool out, the request body read whole
// and forwarded, the response piped back as it arrives; no parsing, no checks, no accounting. Run as its own process, like the gateway.
import { createServer } from 'node:http';
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

function forward(req, res, body) {
  // undici's stream(): the response body is written straight into `res`, with no Readable in between.
  pool.stream(
    { path: req.url, method: req.method, headers: forwardable(req.headers), body },
    ({ statusCode, headers }) => {
      res.writeHead(statusCode, forwardable(headers));
      return res;
    },
    (err) => {
      if (!err) return;
      if (res.headersSent) {
        res.destroy(err);
        return;
      }
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(`{"error":{"message":"bare proxy: ${String(err.message).replace(/"/g, "'")}","type":"upstream_error","code":"upstream_unavailable","param":null}}`);
    },
  );
}

// The request body is read whole first, as any gateway must before checking it; the response is piped as it arrives.
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => forward(req, res, chunks.length === 0 ? null : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
