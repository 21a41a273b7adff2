// A yardstick between the bare proxy and the gateway: the bare proxy plus the least bookkeeping an accounted request needs.
// It parses the body, rewrites the model for the upstream, reads the usage from the answer (the last usage chunk of a
// stream), and queues one usage row through the gateway's own usage writer into SQLite (same schema, same indexes).
// No auth, no policy checks, no counters, no metrics. Run as its own process, like the gateway (BENCH_ACCOUNTED=1).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { openStore } from '../gateway/dist/storage/open-store.js';
import { UsageWriter } from '../gateway/dist/accounting/usage-writer.js';

const upstream = process.env.BENCH_UPSTREAM;
if (!upstream) throw new Error('BENCH_UPSTREAM is not set');
const pool = new Pool(upstream, { connections: 128, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 });
const dir = mkdtempSync(join(tmpdir(), 'agentgw-bench-accounted-'));
const store = await openStore({ kind: 'sqlite', path: join(dir, 'usage.db') });
let reported = false;
const usage = new UsageWriter(store, {
  onError: (err) => {
    if (!reported) process.stderr.write(`accounted proxy: usage rows not written: ${err?.message ?? err}\n`);
    reported = true;
  },
});
const TAIL = 2048;
let seq = 0;

/** The usage of the last stream frame that carries one (`data: {..."usage":{...}}`), or null. */
function streamUsage(tail) {
  const frames = tail.split('\n\n');
  for (let i = frames.length - 1; i >= 0; i--) {
    const f = frames[i];
    if (!f.startsWith('data: {') || !f.includes('"usage":{')) continue;
    try {
      return JSON.parse(f.slice(6)).usage;
    } catch {
      return null;
    }
  }
  return null;
}

function record(req, model, stream, started, status, u) {
  usage.add({
    request_id: `acc_${process.pid}_${seq++}`,
    trace_id: String(req.headers['x-agent-trace-id'] ?? 'none'),
    tenant_id: 'bench',
    agent_id: 'bench-agent',
    model,
    provider: 'openai',
    stream,
    status: status === 200 ? 'ok' : 'error',
    http_status: status,
    error_code: null,
    prompt_tokens: u?.prompt_tokens ?? 0,
    completion_tokens: u?.completion_tokens ?? 0,
    cost: ((u?.prompt_tokens ?? 0) * 0.15 + (u?.completion_tokens ?? 0) * 0.6) / 1e6,
    estimated: false,
    latency_ms: performance.now() - started,
    ttft_ms: null,
    started_at: new Date().toISOString(),
    pii_types: [],
    body: null,
    endpoint: 'chat.completions',
    cached_tokens: 0,
    reasoning_tokens: 0,
    response_id: null,
  });
}

function forward(req, res, raw) {
  const started = performance.now();
  const body = JSON.parse(raw);
  const model = body.model;
  body.model = model.slice(model.indexOf('/') + 1);
  const stream = body.stream === true;
  const chunks = [];
  let tail = '';
  let status = 0;
  pool.dispatch(
    { path: req.url, method: 'POST', headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' }, body: JSON.stringify(body) },
    {
      onConnect() {},
      onHeaders(statusCode, headers) {
        status = statusCode;
        if (stream) res.writeHead(statusCode, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
        return true;
      },
      onData(chunk) {
        if (!stream) chunks.push(chunk);
        else {
          res.write(chunk);
          tail = (tail + chunk.toString('utf8')).slice(-TAIL);
        }
        return true;
      },
      onComplete() {
        if (stream) {
          res.end();
          record(req, model, true, started, status, streamUsage(tail));
          return;
        }
        const text = Buffer.concat(chunks).toString('utf8');
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
        record(req, model, false, started, status, JSON.parse(text).usage);
      },
      onError(err) {
        if (res.headersSent) res.destroy(err);
        else {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end('{"error":{"message":"accounted proxy: upstream failed","type":"upstream_error","code":"upstream_unavailable","param":null}}');
        }
      },
      onUpgrade() {},
      onBodySent() {},
    },
  );
}

const server = createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => forward(req, res, parts.length === 1 ? parts[0].toString('utf8') : Buffer.concat(parts).toString('utf8')));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  server.close();
  await usage.flush().catch(() => undefined);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}
process.on('disconnect', stop);
process.on('SIGTERM', stop);
