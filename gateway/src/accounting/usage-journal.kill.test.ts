// kill -9 of a real `agentgw serve` under 200-way load, at several random moments: every request answered 200 with a
// complete body has its usage row after the restart, on SQLite and on PostgreSQL + Redis (a PostgreSQL and a Redis of
// the test's own), and after every restart the spend the counters hold equals the sum of the rows, to the 1e-10 USD.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { stringify } from 'yaml';
import { adminClient } from '../test-support/admin.js';
import { type OwnPostgres, startOwnPostgres } from '../test-support/own-postgres.js';
import { type OwnRedis, startOwnRedis } from '../test-support/own-redis.js';
import { AGENTGW_BIN } from '../test-support/spawn-gateway.js';

/** The binary under test: the built CLI, or another build (AGENTGW_KILL_TEST_BIN) to measure an earlier release. */
const BIN = process.env.AGENTGW_KILL_TEST_BIN ?? AGENTGW_BIN;
const CLIENTS = 200;
const KILLS = Number(process.env.AGENTGW_KILL_TEST_ROUNDS ?? 5);
const ADMIN_KEY = `adk_${randomBytes(16).toString('hex')}`;

interface Node {
  url: string;
  child: ChildProcess;
  stdout(): string;
  exited: Promise<unknown>;
}

/** `agentgw serve` on a free port; its stdout (pino's log lines) is kept. */
async function serve(configPath: string): Promise<Node> {
  const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath, '--port', '0'], {
    // In the config's directory: a journal left at its default for PostgreSQL is ./data/ there.
    cwd: dirname(configPath),
    env: { ...process.env, AGENTGW_ADMIN_KEY: ADMIN_KEY, AGENTGW_DATABASE_URL: '', AGENTGW_REDIS_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise((r) => child.once('exit', r));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agentgw did not start within 30 s: ${err}`)), 30_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /agentgw listening: admin (\S+)\/api/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`agentgw exited with ${code}: ${err}`));
    });
  });
  return { url, child, stdout: () => out, exited };
}

/** 200 clients send chat completions (every other one streamed) until the node dies; the ids answered 200 in full. */
async function load(node: Node, key: string, round: number): Promise<{ ok: string[]; started: Promise<void>; done: Promise<void> }> {
  const ok: string[] = [];
  let dead = false;
  void node.exited.then(() => (dead = true));
  let markStarted!: () => void;
  const started = new Promise<void>((r) => (markStarted = r));
  let i = 0;
  const one = async (stream: boolean) => {
    const res = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-trace-id': `round-${round}-${i % 20}` },
      body: JSON.stringify({ model: 'mock/mock-1', stream, max_tokens: 64, messages: [{ role: 'user', content: `round ${round} request ${i++}: say something` }] }),
    });
    const text = await res.text();
    const complete = stream ? text.endsWith('data: [DONE]\n\n') && !text.includes('"error"') : (JSON.parse(text) as { object?: string }).object === 'chat.completion';
    if (res.status === 200 && complete) {
      ok.push(res.headers.get('x-request-id')!);
      if (ok.length === 1) markStarted();
    }
  };
  const done = Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      while (!dead) await one(c % 2 === 1).catch(() => undefined);
    }),
  ).then(() => undefined);
  return { ok, started, done };
}

/** Kills the node with SIGKILL at a random moment of the load (after it has answered), then waits for the clients. */
async function killMidLoad(node: Node, key: string, round: number): Promise<{ ok: string[]; atMs: number }> {
  const { ok, started, done } = await load(node, key, round);
  await started;
  const atMs = 200 + Math.floor(Math.random() * 800);
  await new Promise((r) => setTimeout(r, atMs));
  node.child.kill('SIGKILL');
  await node.exited;
  await done;
  return { ok, atMs };
}

/** The rows the restarted node says it replayed from the journal (its info log line), and the settles it made of them. */
function replayedRows(node: Node): string {
  const line = node.stdout().split('\n').find((l) => l.includes('usage journal replayed'));
  const { rows = 0, settled = 0 } = line ? (JSON.parse(line) as { rows?: number; settled?: number }) : {};
  return `${rows} rows replayed from the journal (${settled} of them settled then)`;
}

async function setUp(url: string): Promise<{ key: string; agentId: string }> {
  const admin = adminClient(`${url}/api`, ADMIN_KEY);
  await admin.tenant('acme');
  // A budget, so every request reserves and settles; large enough never to refuse.
  await admin.policy('budgeted', { tenant_id: 'acme', daily_budget: 100_000, monthly_budget: 100_000 });
  const agent = await admin.agent('acme', 'bot', 'budgeted');
  return { key: agent.api_key, agentId: agent.id };
}

/**
 * Runs KILLS rounds of load + kill -9 + restart; returns the answered ids and the last (running) node. `afterRestart`
 * says what to add to the round's line (and checks what it must).
 */
async function rounds(configPath: string, label: string, afterRestart?: (node: Node, agentId: string) => Promise<string>) {
  let node = await serve(configPath);
  const { key, agentId } = await setUp(node.url);
  const answered: string[] = [];
  const report: string[] = [];
  for (let round = 1; round <= KILLS; round++) {
    const { ok, atMs } = await killMidLoad(node, key, round);
    answered.push(...ok);
    node = await serve(configPath);
    const extra = afterRestart ? `; ${await afterRestart(node, agentId)}` : '';
    report.push(`round ${round}: killed ${atMs} ms into the load, ${ok.length} answered 200, ${replayedRows(node)}${extra}`);
  }
  console.log(`${label}:\n  ${report.join('\n  ')}`);
  return { node, answered, key, agentId };
}

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('kill -9 under 200-way load loses no billed usage row', () => {
  test(`SQLite: ${KILLS} kills at random moments, every 200 has its row after the restart, and budgets include them`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-kill-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = join(dir, 'agentgw.db');
    const configPath = join(dir, 'agentgw.yaml');
    writeFileSync(configPath, stringify({ log_level: 'info', storage: { kind: 'sqlite', path: db } }));
    const began = new Date();
    const { node, answered, agentId } = await rounds(configPath, 'SQLite');
    try {
      const sqlite = new Database(db, { readonly: true });
      try {
        const present = new Set((sqlite.prepare(`select request_id from usage_records where agent_id = ?`).all(agentId) as Array<{ request_id: string }>).map((r) => r.request_id));
        const lost = answered.filter((id) => !present.has(id));
        console.log(`SQLite: ${answered.length} answered 200 in ${KILLS} rounds, ${lost.length} without a usage row after the restarts`);
        expect(answered.length).toBeGreaterThan(KILLS * 50);
        expect(lost).toEqual([]);
        // The restarted node seeded its counters from the database after the replay: its spend is the rows' sum.
        // (Against the rows of this UTC month, unless the month turned while the test ran.)
        const spend = (await adminClient(`${node.url}/api`, ADMIN_KEY).call('GET', `/agents/${agentId}`)).spend;
        const month = new Date().toISOString().slice(0, 7);
        const { cost } = sqlite
          .prepare(`select coalesce(sum(cost), 0) as cost from usage_records where agent_id = ? and started_at >= ?`)
          .get(agentId, `${month}-01T00:00:00`) as { cost: number };
        expect(cost).toBeGreaterThan(0);
        if (began.toISOString().slice(0, 7) === month) expect(spend.month).toBeCloseTo(cost, 9);
      } finally {
        sqlite.close();
      }
    } finally {
      node.child.kill('SIGTERM');
      await node.exited;
    }
  }, 120_000);

  test(`PostgreSQL + Redis: ${KILLS} kills at random moments, every 200 has its row after the restart, and Redis spend equals the rows every time`, async () => {
    const [own, redis]: [OwnPostgres, OwnRedis] = await Promise.all([startOwnPostgres(), startOwnRedis()]);
    cleanups.push(() => redis.cleanup(), () => own.cleanup());
    const client = new pg.Client({ connectionString: own.url });
    await client.connect();
    cleanups.push(() => client.end());
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-kill-pg-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const configPath = join(dir, 'agentgw.yaml');
    writeFileSync(
      configPath,
      stringify({ log_level: 'info', storage: { kind: 'postgres', url: own.url }, counters: { kind: 'redis', url: redis.url } }),
    );
    const gaps: number[] = [];
    const turned: string[] = [];
    // The restarted node replayed the killed node's journal (rows, and the settles that had not reached Redis). Each
    // counter is compared with the rows of its own UTC window (day, month); a window that turned while the round ran
    // (a run across midnight) is left out of that round's comparison, since a request started before the turn is
    // counted in the window it was reserved in.
    let roundBegan = new Date();
    let round = 0;
    const spendEqualsRows = async (node: Node, agentId: string) => {
      const began = roundBegan;
      round++;
      const spend = (await adminClient(`${node.url}/api`, ADMIN_KEY).call('GET', `/agents/${agentId}`)).spend as { day: number; month: number };
      const now = new Date();
      const day = now.toISOString().slice(0, 10);
      const month = day.slice(0, 7);
      const { rows } = await client.query<{ day: string | null; month: string | null; cost: string | null }>(
        `select sum(cost) filter (where started_at >= $2) as day, sum(cost) filter (where started_at >= $3) as month, sum(cost) as cost
           from usage_records where agent_id = $1`,
        [agentId, `${day}T00:00:00`, `${month}-01T00:00:00`],
      );
      const cost = Number(rows[0]?.cost ?? 0);
      const since = began.toISOString();
      if (since.slice(0, 7) === month) gaps.push(spend.month - Number(rows[0]?.month ?? 0));
      else turned.push(`the month turned in round ${round}`);
      if (since.slice(0, 10) === day) gaps.push(spend.day - Number(rows[0]?.day ?? 0));
      else turned.push(`the day turned in round ${round}`);
      roundBegan = new Date();
      return `rows $${cost.toFixed(6)}, Redis $${spend.month.toFixed(6)}`;
    };
    const { node, answered, agentId } = await rounds(configPath, 'PostgreSQL + Redis', spendEqualsRows);
    try {
      const { rows } = await client.query<{ request_id: string }>(`select request_id from usage_records where agent_id = $1`, [agentId]);
      const present = new Set(rows.map((r) => r.request_id));
      const lost = answered.filter((id) => !present.has(id));
      console.log(`PostgreSQL + Redis: ${answered.length} answered 200 in ${KILLS} rounds, ${lost.length} without a usage row after the restarts; Redis spend minus rows of its window after each restart (month, day): ${gaps.map((g) => g.toFixed(10)).join(', ')}${turned.length ? ` (${turned.join('; ')})` : ''}`);
      expect(answered.length).toBeGreaterThan(KILLS * 50);
      expect(lost).toEqual([]);
      expect(gaps.length).toBeGreaterThanOrEqual(2 * KILLS - 2);
      for (const gap of gaps) expect(Math.abs(gap)).toBeLessThan(1e-9);
    } finally {
      node.child.kill('SIGTERM');
      await node.exited;
    }
  }, 180_000);
});
