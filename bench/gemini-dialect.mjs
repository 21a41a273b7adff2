// CPU per request of the Gemini dialect against Chat Completions, on bodies of the same size and the same conversation,
// both native (a gemini provider, an openai provider) with every check of bench/lib/gateway-setup.mjs's policy on.
// Run `npm run build` first, then `node bench/gemini-dialect.mjs`. BENCH_GEMINI_REQUESTS (default 4000) per round,
// BENCH_GEMINI_ROUNDS (default 5), BENCH_GEMINI_CONNECTIONS (default 8), BENCH_GEMINI_TURNS (default 24: the body's
// conversation length). It prints the gateway's CPU microseconds per request for each dialect (median of the rounds,
// which alternate) and exits 1 when the Gemini dialect's is more than 5 % above Chat Completions'.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { cpuTimeMs, forkServer, killChildren, spawnGateway } from './lib/children.mjs';
import { POLICY, provisionAgent } from './lib/gateway-setup.mjs';

const num = (name, fallback) => Number(process.env[name] ?? fallback);
const REQUESTS = num('BENCH_GEMINI_REQUESTS', 4000);
const ROUNDS = num('BENCH_GEMINI_ROUNDS', 5);
const CONNECTIONS = num('BENCH_GEMINI_CONNECTIONS', 8);
const TURNS = num('BENCH_GEMINI_TURNS', 24);
const TOLERANCE = 0.05;

const SYSTEM = 'You are a careful assistant. Answer briefly and cite the file you read. '.repeat(8);
const turnText = (i) => `Turn ${i}: please look at src/module_${i}.ts and tell me what the function handleRequest${i} does, in two sentences. `.repeat(3);

/** The same conversation in both dialects; `n` makes each request's last turn unique (no retry block, no cache of the last part). */
function chatBody(n) {
  const messages = [{ role: 'system', content: SYSTEM }];
  for (let i = 0; i < TURNS; i++) messages.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: turnText(i) });
  messages.push({ role: 'user', content: `Request ${n}: summarise.` });
  return JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 64, messages });
}
function geminiBody(n) {
  const contents = [];
  for (let i = 0; i < TURNS; i++) contents.push({ role: i % 2 === 0 ? 'user' : 'model', parts: [{ text: turnText(i) }] });
  contents.push({ role: 'user', parts: [{ text: `Request ${n}: summarise.` }] });
  return JSON.stringify({ systemInstruction: { parts: [{ text: SYSTEM }] }, contents, generationConfig: { maxOutputTokens: 64 } });
}

const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });

function post(url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${url} answered ${res.statusCode}: ${text.slice(0, 300)}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function run(send, count, from) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < count) await send(from + next++);
    }),
  );
}

const dir = mkdtempSync(join(tmpdir(), 'agentgw-bench-gemini-'));
try {
  const upstream = await forkServer('gemini-upstream.mjs');
  const configPath = join(dir, 'agentgw.yaml');
  writeFileSync(
    configPath,
    JSON.stringify({
      storage: { kind: 'sqlite', path: join(dir, 'agentgw.db') },
      log_level: 'warn',
      providers: {
        openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-bench' },
        gemini: { type: 'gemini', base_url: `${upstream.url}/v1beta`, api_key: 'goog-bench' },
      },
    }),
  );
  const adminKey = 'adk_bench_gemini_dialect_0123456789abcdef';
  const gw = await spawnGateway({ configPath, adminKey });
  // The bench bodies are larger than the load phase's: the cap is raised to let them through (every check still runs).
  const key = await provisionAgent(gw.url, adminKey, { policy: { ...POLICY, allowed_models: ['openai/gpt-4o*', 'gemini/gemini-2.5-flash'], rules: { ...POLICY.rules, max_cost_per_request: 0.05 } } });
  const dialects = {
    chat: { size: Buffer.byteLength(chatBody(0)), send: (n) => post(`${gw.url}/v1/chat/completions`, { authorization: `Bearer ${key}` }, chatBody(n)) },
    gemini: { size: Buffer.byteLength(geminiBody(0)), send: (n) => post(`${gw.url}/v1beta/models/gemini/gemini-2.5-flash:generateContent`, { 'x-goog-api-key': key }, geminiBody(n)) },
  };
  const perRequest = { chat: [], gemini: [] };
  let sent = 0;
  for (const d of Object.values(dialects)) {
    await run(d.send, 500, sent);
    sent += 500;
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? ['chat', 'gemini'] : ['gemini', 'chat']) {
      const before = cpuTimeMs(gw.child.pid);
      await run(dialects[name].send, REQUESTS, sent);
      sent += REQUESTS;
      perRequest[name].push(((cpuTimeMs(gw.child.pid) - before) * 1000) / REQUESTS);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const chat = median(perRequest.chat);
  const gemini = median(perRequest.gemini);
  console.log(`body bytes: chat ${dialects.chat.size}, gemini ${dialects.gemini.size}; ${ROUNDS} rounds x ${REQUESTS} requests, ${CONNECTIONS} connections`);
  console.log(`gateway CPU per request (us, median): chat.completions ${chat.toFixed(1)}, gemini ${gemini.toFixed(1)} (${((gemini / chat - 1) * 100).toFixed(1)} %)`);
  console.log(`rounds: chat ${perRequest.chat.map((x) => x.toFixed(0)).join(' ')}; gemini ${perRequest.gemini.map((x) => x.toFixed(0)).join(' ')}`);
  await gw.stop();
  if (gemini > chat * (1 + TOLERANCE)) {
    console.error(`the Gemini dialect costs more than ${TOLERANCE * 100} % above Chat Completions per request`);
    process.exitCode = 1;
  }
} finally {
  killChildren();
  rmSync(dir, { recursive: true, force: true });
}
