// The real Codex CLI (@openai/codex 0.169, `codex exec --json`, headless, offline) through agentgw's POST /v1/responses,
// on an OpenAI-format upstream (native: Codex's body goes on as sent, only `model` changed) and on an Anthropic-format
// upstream (translated through Chat Completions: exec_command & co. become Anthropic tools, web_search Anthropic's own).
// A multi-step tool-using task (create a file with exec_command, read it back, answer) runs to completion as one trace
// (Codex's session-id) billed at the configured prices into the agent's budget; a budget spent mid-run stops it.
//
// A recording proxy sits between Codex and the gateway, so the tests see what Codex sent and what the gateway answered
// (status, x-agentgw-dropped-tools, Retry-After) without touching Codex.
import { type IncomingHttpHeaders, type Server, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { expectOpenResponsesStream } from './__fixtures__/open-responses-schema.js';
import { type CodexRun, DEFAULT_CODEX_MODEL, codexCommands, execCommandArgs, runCodex } from '../../../test-support/codex.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type AnthropicUsage, type Reply, type ScriptedAnthropic, startScriptedAnthropic, textReply, toolUseReply } from '../../../test-support/scripted-anthropic.js';
import {
  type ResponseReply,
  type ResponsesUsage,
  type ScriptedResponses,
  declaredTools,
  functionCallOutputs,
  functionCallResponse,
  startScriptedResponses,
  textResponse,
  toolNames,
} from '../../../test-support/scripted-responses.js';

const RUN_TIMEOUT_MS = 90_000;
const TEST_TIMEOUT_MS = 120_000;
/** The budget test's Codex run: long enough for a refusal and one retry, short enough that a Codex sleeping on Retry-After fails fast. */
const BUDGET_RUN_TIMEOUT_MS = 30_000;

/** The model Codex is configured with (a catalog model: classic `tools`, 10 of them); the gateway routes it by alias. */
const CODEX_MODEL = DEFAULT_CODEX_MODEL;

/** USD per million tokens, as configured. */
interface Price {
  input: number;
  output: number;
  cached_input: number;
  cache_write_input?: number;
  max_output_tokens: number;
}

/** The usage one upstream turn reports, in either format. */
interface TurnUsage {
  responses?: ResponsesUsage;
  anthropic?: AnthropicUsage;
}

// ---------------------------------------------------------------------------------------------------------------------
// a recording proxy between Codex and the gateway

interface ProxiedExchange {
  method: string;
  path: string;
  requestHeaders: IncomingHttpHeaders;
  body: any;
  status: number;
  responseHeaders: IncomingHttpHeaders;
  responseText: string;
}

interface RecordingProxy {
  /** `http://127.0.0.1:PORT` (Codex's base_url is this plus `/v1`). */
  origin: string;
  exchanges: ProxiedExchange[];
  close(): Promise<void>;
}

/** Forwards every request to `target` (an origin) as is, streaming the answer back, and records both sides. */
async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const exchanges: ProxiedExchange[] = [];
  const to = new URL(target);
  const server: Server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const raw = Buffer.concat(parts);
    let body: any = null;
    try {
      body = raw.length ? JSON.parse(raw.toString('utf8')) : null;
    } catch {
      body = raw.toString('utf8');
    }
    const exchange: ProxiedExchange = { method: req.method ?? '', path: req.url ?? '', requestHeaders: req.headers, body, status: 0, responseHeaders: {}, responseText: '' };
    exchanges.push(exchange);
    const upstream = httpRequest(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
      (up) => {
        exchange.status = up.statusCode ?? 0;
        exchange.responseHeaders = up.headers;
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.on('data', (d: Buffer) => {
          exchange.responseText += d.toString('utf8');
          res.write(d);
        });
        up.on('end', () => res.end());
        up.on('error', () => res.destroy());
      },
    );
    upstream.on('error', (e) => {
      exchange.status = 599;
      exchange.responseText = String(e);
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    upstream.end(raw);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// the two upstreams, behind one interface

/** What the tests need from either upstream. */
interface Upstream {
  url: string;
  /** Upstream model requests received so far. */
  count(): number;
  /** The bodies received from index `from` on. */
  bodiesFrom(from: number): any[];
  /** The requests (headers too) received from index `from` on. */
  requestsFrom(from: number): Array<{ headers: IncomingHttpHeaders; body: any }>;
  /**
   * The task: while fewer tool results than `cmds` came back, the next exec_command call; then `finalText` of the last
   * tool result's text. `usageOf(turn)` is what each turn reports.
   */
  setTask(cmds: string[], finalText: (lastToolOutput: string) => string, usageOf?: (turn: number) => TurnUsage | undefined): void;
  /** The number of tool results in a request the upstream received (the turn it answers). */
  turnOf(body: any): number;
  /** The expected cost (USD) of one turn's reported usage at `price`, and its prompt / cached / completion counts. */
  billed(u: TurnUsage, price: Price): { cost: number; prompt: number; cached: number; completion: number };
  close(): Promise<void>;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: any) => (typeof b === 'string' ? b : typeof b?.text === 'string' ? b.text : '')).join('');
  return '';
}

async function responsesUpstream(): Promise<{ upstream: Upstream; raw: ScriptedResponses }> {
  let cmds: string[] = [];
  let finalText: (out: string) => string = () => 'done';
  let usageOf: (turn: number) => TurnUsage | undefined = () => undefined;
  const turnOf = (body: any): number => functionCallOutputs(body).length;
  const raw = await startScriptedResponses((body): ResponseReply => {
    const turn = turnOf(body);
    const usage = usageOf(turn)?.responses;
    const cmd = declaredTools(body).length > 0 ? cmds[turn] : undefined;
    if (cmd !== undefined) return functionCallResponse('exec_command', execCommandArgs(cmd), `call_codex_e2e_${turn}`, usage);
    return textResponse(finalText(textOf(functionCallOutputs(body).at(-1)?.output)), usage);
  });
  const upstream: Upstream = {
    url: raw.url,
    count: () => raw.responseRequests.length,
    bodiesFrom: (from) => raw.responseRequests.slice(from).map((r) => r.body),
    requestsFrom: (from) => raw.responseRequests.slice(from),
    setTask(c, f, u) {
      cmds = c;
      finalText = f;
      usageOf = u ?? (() => undefined);
    },
    turnOf,
    billed(u, price) {
      const r = u.responses!;
      const cached = r.input_tokens_details?.cached_tokens ?? 0;
      const micro = (r.input_tokens - cached) * price.input + cached * price.cached_input + r.output_tokens * price.output;
      return { cost: micro / 1e6, prompt: r.input_tokens, cached, completion: r.output_tokens };
    },
    close: () => raw.close(),
  };
  return { upstream, raw };
}

async function anthropicUpstream(): Promise<{ upstream: Upstream; raw: ScriptedAnthropic }> {
  let cmds: string[] = [];
  let finalText: (out: string) => string = () => 'done';
  let usageOf: (turn: number) => TurnUsage | undefined = () => undefined;
  const toolResults = (body: any): any[] =>
    (Array.isArray(body?.messages) ? body.messages : []).flatMap((m: any) => (m?.role === 'user' && Array.isArray(m.content) ? m.content.filter((b: any) => b?.type === 'tool_result') : []));
  const turnOf = (body: any): number => toolResults(body).length;
  const raw = await startScriptedAnthropic((body): Reply => {
    const turn = turnOf(body);
    const usage = usageOf(turn)?.anthropic;
    const hasTools = Array.isArray(body?.tools) && body.tools.length > 0;
    const cmd = hasTools ? cmds[turn] : undefined;
    if (cmd !== undefined) return toolUseReply('exec_command', execCommandArgs(cmd), `toolu_01codexe2e${turn}`, usage);
    return textReply(finalText(textOf(toolResults(body).at(-1)?.content)), usage);
  });
  const upstream: Upstream = {
    url: raw.url,
    count: () => raw.messageRequests.length,
    bodiesFrom: (from) => raw.messageRequests.slice(from).map((r) => r.body),
    requestsFrom: (from) => raw.messageRequests.slice(from),
    setTask(c, f, u) {
      cmds = c;
      finalText = f;
      usageOf = u ?? (() => undefined);
    },
    turnOf,
    billed(u, price) {
      const a = u.anthropic!;
      const input = a.input_tokens ?? 0;
      const read = a.cache_read_input_tokens ?? 0;
      const written = a.cache_creation_input_tokens ?? 0;
      const out = a.output_tokens ?? 0;
      const micro = input * price.input + read * price.cached_input + written * (price.cache_write_input ?? price.input) + out * price.output;
      return { cost: micro / 1e6, prompt: input + read + written, cached: read, completion: out };
    },
    close: () => raw.close(),
  };
  return { upstream, raw };
}

// ---------------------------------------------------------------------------------------------------------------------
// the cases

interface Case {
  name: string;
  kind: 'native' | 'translated';
  start(): Promise<{ upstream: Upstream }>;
  /** The gateway's providers, the alias routing Codex's model, and the target's price. */
  config(url: string): Record<string, unknown>;
  /** The target's provider / model as the trace names them, and the upstream's model id. */
  provider: string;
  model: string;
  upstreamModel: string;
  price: Price;
  /** The usage each turn of the main task reports (cache reads included). */
  usage(turn: number): TurnUsage;
  /** Budget test: a first turn that spends most of `budgetDaily`, so the second turn's worst case does not fit. */
  heavyUsage: TurnUsage;
  smallUsage: TurnUsage;
}

const RESPONSES_PRICE: Price = { input: 1.25, output: 10, cached_input: 0.125, max_output_tokens: 32_000 };
const ANTHROPIC_PRICE: Price = { input: 1, output: 10, cached_input: 0.1, cache_write_input: 1.25, max_output_tokens: 32_000 };

/**
 * Budget test: a turn's worst case is ~40k prompt tokens (Codex's ~38 KB body, bounded) x $1-1.25 + 32,000 output tokens
 * x $10 = ~$0.37; the first turn fits $1, and after heavyUsage (~$0.7-0.9) the second does not.
 */
const BUDGET_DAILY = 1;

const CASES: Case[] = [
  {
    name: 'native: OpenAI-format upstream (gpt-5.5 -> openai/gpt-5.1-codex)',
    kind: 'native',
    start: responsesUpstream,
    config: (url) => ({
      providers: { openai: { type: 'openai', base_url: url, api_key: 'sk-openai-upstream-secret' } },
      models: { [CODEX_MODEL]: ['openai/gpt-5.1-codex'] },
      prices: { 'openai/gpt-5.1-codex': RESPONSES_PRICE },
    }),
    provider: 'openai',
    model: 'openai/gpt-5.1-codex',
    upstreamModel: 'gpt-5.1-codex',
    price: RESPONSES_PRICE,
    usage: (turn) => ({
      responses: {
        input_tokens: 9000 + 100 * turn,
        input_tokens_details: { cached_tokens: 4000 * turn },
        output_tokens: 40 + turn,
        output_tokens_details: { reasoning_tokens: 10 + turn },
        total_tokens: 9000 + 100 * turn + 40 + turn,
      },
    }),
    heavyUsage: { responses: { input_tokens: 700_000, input_tokens_details: { cached_tokens: 0 }, output_tokens: 100, output_tokens_details: { reasoning_tokens: 0 } } },
    smallUsage: { responses: { input_tokens: 1000, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 } } },
  },
  {
    name: 'translated: Anthropic-format upstream (gpt-5.5 -> anthropic/claude-sonnet-4-5)',
    kind: 'translated',
    start: anthropicUpstream,
    config: (url) => ({
      providers: { anthropic: { type: 'anthropic', base_url: url, api_key: 'sk-ant-upstream-secret' } },
      models: { [CODEX_MODEL]: ['anthropic/claude-sonnet-4-5'] },
      prices: { 'anthropic/claude-sonnet-4-5': ANTHROPIC_PRICE },
    }),
    provider: 'anthropic',
    model: 'anthropic/claude-sonnet-4-5',
    upstreamModel: 'claude-sonnet-4-5',
    price: ANTHROPIC_PRICE,
    usage: (turn) => ({ anthropic: { input_tokens: 3000 + 100 * turn, cache_read_input_tokens: 5000 * turn, cache_creation_input_tokens: 0, output_tokens: 40 + turn } }),
    heavyUsage: { anthropic: { input_tokens: 700_000, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 100 } },
    smallUsage: { anthropic: { input_tokens: 1000, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 20 } },
  },
];

/** The text after `Output:\n` of Codex's exec_command result (`Chunk ID: ...\nWall time: ...\nProcess exited with code 0\n...Output:\n<text>`). */
function execOutput(text: string): string {
  const at = text.indexOf('Output:\n');
  return (at === -1 ? text : text.slice(at + 'Output:\n'.length)).trim();
}

function describeRun(run: CodexRun): string {
  return `exit ${run.code} signal ${run.signal} timedOut ${run.timedOut} error ${run.error}\nstdout: ${run.stdout.slice(-3000)}\nstderr: ${run.stderr.slice(-2000)}`;
}

describe.each(CASES)('Codex through agentgw, $name', (c) => {
  let gw: TestGateway;
  let upstream: Upstream;
  let proxy: RecordingProxy;
  let admin: ReturnType<typeof adminClient>;
  let agentCounter = 0;

  beforeAll(async () => {
    ({ upstream } = await c.start());
    gw = await startTestGateway({ config: c.config(upstream.url) });
    proxy = await startRecordingProxy(gw.url);
    admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
  });
  afterAll(async () => {
    await proxy?.close();
    await gw?.close();
    await upstream?.close();
    // Every stream agentgw answered Codex with, against the Open Responses schema (Codex's custom apply_patch and
    // built-in tool calls are extensions of it).
    const answered = proxy.exchanges.filter((x) => x.method === 'POST' && x.path === '/v1/responses' && x.status === 200);
    expect(answered.length).toBeGreaterThan(0);
    for (const x of answered) expectOpenResponsesStream(x.responseText);
  });

  async function newAgent(policy?: Record<string, unknown>): Promise<{ id: string; key: string }> {
    agentCounter += 1;
    let policyId: string | undefined;
    if (policy) {
      policyId = `codex-${c.kind}-${agentCounter}`;
      await admin.policy(policyId, { tenant_id: 'acme', ...policy });
    }
    const agent = await admin.agent('acme', `codex-${c.kind}-${agentCounter}`, policyId);
    return { id: agent.id, key: agent.api_key };
  }

  async function traceOf(traceId: string): Promise<any> {
    await gw.runtime.dataPlane.usage.flush();
    return admin.call('GET', `/traces/${encodeURIComponent(traceId)}`);
  }

  test(
    'a multi-step exec_command task runs to completion: one trace (session-id), every step billed into the agent\'s budget',
    async () => {
      const cwd = await mkdtemp(join(tmpdir(), 'agentgw-codex-task-'));
      try {
        upstream.setTask(["printf 'codex-note-4242\\n' > note.txt", 'cat note.txt'], (out) => `The note says: ${execOutput(out)}`, (turn) => c.usage(turn));
        const from = upstream.count();
        const proxiedFrom = proxy.exchanges.length;
        const agent = await newAgent();
        const t0 = performance.now();
        const run = await runCodex({
          baseUrl: `${proxy.origin}/v1`,
          apiKey: agent.key,
          prompt: 'Create note.txt containing codex-note-4242 using the shell, read it back, and tell me what it says.',
          cwd,
          timeoutMs: RUN_TIMEOUT_MS,
          model: CODEX_MODEL,
        });
        const ms = Math.round(performance.now() - t0);

        // Codex finished the task.
        expect(run.timedOut, describeRun(run)).toBe(false);
        expect(run.code, describeRun(run)).toBe(0);
        expect(run.error, describeRun(run)).toBeNull();
        expect(run.lastMessage, describeRun(run)).toBe('The note says: codex-note-4242');
        expect(await readFile(join(cwd, 'note.txt'), 'utf8')).toBe('codex-note-4242\n');
        const commands = codexCommands(run.events);
        expect(commands.map((x) => x.exit_code)).toEqual([0, 0]);
        expect(commands[1]?.aggregated_output).toContain('codex-note-4242');
        expect(run.threadId).toMatch(/^[0-9a-f-]{36}$/);
        const traceId = run.threadId!;

        // What Codex sent and what the gateway answered: three POST /v1/responses, all 200, one trace.
        const proxied = proxy.exchanges.slice(proxiedFrom);
        expect(proxied.map((x) => `${x.method} ${x.path} ${x.status}`)).toEqual(Array(3).fill('POST /v1/responses 200'));
        for (const x of proxied) {
          expect(x.requestHeaders['session-id']).toBe(traceId);
          expect(x.requestHeaders['x-agent-trace-id']).toBeUndefined();
          expect(x.responseHeaders['x-agent-trace-id']).toBe(traceId);
          expect(x.responseHeaders['content-type']).toMatch(/^text\/event-stream/);
          expect(x.body.model).toBe(CODEX_MODEL);
          expect(x.body.stream).toBe(true);
          expect(x.body.prompt_cache_key).toBe(traceId);
        }
        const codexBodies = proxied.map((x) => x.body);
        expect(toolNames(codexBodies[0])).toEqual(expect.arrayContaining(['exec_command', 'apply_patch', 'web_search']));

        // The upstream: one model call per Codex request, the whole task's tool round trips in them.
        const requests = upstream.requestsFrom(from);
        const bodies = requests.map((r) => r.body);
        expect(bodies.map((b) => upstream.turnOf(b))).toEqual([0, 1, 2]);
        for (const r of requests) {
          expect(r.body.model).toBe(c.upstreamModel);
          expect(JSON.stringify(r.headers)).not.toContain(agent.key);
        }

        if (c.kind === 'native') {
          // Codex's body as sent, only `model` changed: tools (custom apply_patch, web_search, tool_search), include,
          // prompt_cache_key, reasoning, client_metadata, store: false, the echoed function_call items and their outputs.
          bodies.forEach((b, i) => expect(b, `request ${i}`).toEqual({ ...codexBodies[i], model: c.upstreamModel }));
          const tools = bodies[0].tools as any[];
          expect(tools.find((t) => t.name === 'apply_patch')).toMatchObject({ type: 'custom', format: { type: 'grammar', syntax: 'lark' } });
          expect(tools.find((t) => t.type === 'web_search')).toBeDefined();
          expect(bodies[0]).toMatchObject({ include: ['reasoning.encrypted_content'], prompt_cache_key: traceId, reasoning: { effort: 'medium' }, store: false, stream: true });
          for (const r of requests) expect(r.headers.authorization).toBe('Bearer sk-openai-upstream-secret');
          for (const x of proxied) expect(x.responseHeaders['x-agentgw-dropped-tools']).toBeUndefined();
          console.info(`[codex native] codex key order ${Object.keys(codexBodies[0]).join(',')}; upstream key order ${Object.keys(bodies[0]).join(',')}`);
        } else {
          // Codex's client tools as Anthropic tools, web_search as Anthropic's own web search; tool_search left out and named.
          for (const b of bodies) {
            const names = (b.tools as any[]).map((t) => t.name);
            expect(names).toEqual(expect.arrayContaining(['exec_command', 'write_stdin', 'apply_patch', 'view_image']));
            expect((b.tools as any[]).filter((t) => t.name === 'web_search')).toEqual([{ type: 'web_search_20250305', name: 'web_search' }]);
            for (const t of (b.tools as any[]).filter((x) => x.name !== 'web_search')) {
              expect(t.type === undefined || t.type === 'custom', `tool ${t.name} type ${t.type}`).toBe(true);
              expect(t.input_schema?.type).toBe('object');
            }
            expect((b.tools as any[]).find((t) => t.name === 'exec_command').input_schema.required).toEqual(['cmd']);
            expect((b.tools as any[]).find((t) => t.name === 'apply_patch').input_schema.properties.input.type).toBe('string');
            expect(typeof b.max_tokens).toBe('number');
          }
          for (const x of proxied) {
            const dropped = String(x.responseHeaders['x-agentgw-dropped-tools'] ?? '').split(/,\s*/);
            expect(dropped).toEqual(['tool_search']);
          }
          // tool_use -> Codex runs it -> tool_result, twice.
          const results = (b: any) => b.messages.flatMap((m: any) => (m.role === 'user' && Array.isArray(m.content) ? m.content.filter((x: any) => x.type === 'tool_result') : []));
          const uses = (b: any) => b.messages.flatMap((m: any) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content.filter((x: any) => x.type === 'tool_use') : []));
          expect(uses(bodies[2]).map((u: any) => [u.id, u.name, u.input])).toEqual([
            ['toolu_01codexe2e0', 'exec_command', { cmd: "printf 'codex-note-4242\\n' > note.txt" }],
            ['toolu_01codexe2e1', 'exec_command', { cmd: 'cat note.txt' }],
          ]);
          const r2 = results(bodies[2]);
          expect(r2.map((r: any) => r.tool_use_id)).toEqual(['toolu_01codexe2e0', 'toolu_01codexe2e1']);
          expect(textOf(r2[0].content)).toContain('Process exited with code 0');
          expect(execOutput(textOf(r2[1].content))).toBe('codex-note-4242');
          for (const r of requests) expect(r.headers['x-api-key']).toBe('sk-ant-upstream-secret');
          console.info(
            `[codex translated] x-agentgw-dropped-tools: ${proxied[0]?.responseHeaders['x-agentgw-dropped-tools']}; upstream keys ${Object.keys(bodies[0]).join(',')}; ` +
              `max_tokens ${bodies[0].max_tokens}; tools ${(bodies[0].tools as any[]).map((t) => t.name).join(',')}; tool_choice ${JSON.stringify(bodies[0].tool_choice)}; system ${typeof bodies[0].system === 'string' ? bodies[0].system.length : JSON.stringify(bodies[0].system)?.length} chars`,
          );
        }

        // One trace, named by Codex's session-id: every model call a `responses` step, billed at the configured price.
        const trace = await traceOf(traceId);
        expect(trace.trace_id).toBe(traceId);
        expect(trace.agent_id).toBe(agent.id);
        expect(trace.request_count).toBe(3);
        expect(trace.error_count).toBe(0);
        expect(trace.requests).toHaveLength(3);
        let total = 0;
        let prompt = 0;
        let cached = 0;
        let completion = 0;
        trace.requests.forEach((step: any, turn: number) => {
          const want = upstream.billed(c.usage(turn), c.price);
          total += want.cost;
          prompt += want.prompt;
          cached += want.cached;
          completion += want.completion;
          expect(step, `step ${turn}`).toMatchObject({ endpoint: 'responses', stream: true, status: 'ok', http_status: 200, provider: c.provider, model: c.model });
          expect(step.prompt_tokens, `step ${turn} prompt_tokens`).toBe(want.prompt);
          expect(step.cached_tokens, `step ${turn} cached_tokens`).toBe(want.cached);
          expect(step.completion_tokens, `step ${turn} completion_tokens`).toBe(want.completion);
          expect(step.cost, `step ${turn} cost`).toBeCloseTo(want.cost, 9);
          expect(step.response_id).toMatch(/^resp_/);
        });
        expect(trace.cost).toBeCloseTo(total, 9);
        expect(trace.cost).toBeGreaterThan(0);

        // The spend is in the agent's budget, equal to the trace's cost.
        const a = await admin.call('GET', `/agents/${agent.id}`);
        expect(a.spend.day).toBeGreaterThan(0);
        expect(a.spend.day).toBeCloseTo(trace.cost, 9);
        expect(a.spend.month).toBeCloseTo(trace.cost, 9);

        // Codex's own account of the turn's usage agrees with what the gateway billed.
        const completed = (run.events as any[]).filter((e) => e.type === 'turn.completed').at(-1);
        expect(completed?.usage).toMatchObject({ input_tokens: prompt, cached_input_tokens: cached, output_tokens: completion });
        console.info(`[codex ${c.kind}] task: ${ms} ms, ${bodies.length} upstream requests, cost $${trace.cost}, usage ${JSON.stringify(completed?.usage)}`);
      } finally {
        await rm(cwd, { recursive: true, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'a daily budget spent mid-run stops Codex with a readable message: the gateway answers 429 daily_budget_exceeded',
    async () => {
      upstream.setTask(['echo one', 'echo two'], () => 'should not get here', (turn) => (turn === 0 ? c.heavyUsage : c.smallUsage));
      const from = upstream.count();
      const proxiedFrom = proxy.exchanges.length;
      const agent = await newAgent({ daily_budget: BUDGET_DAILY });
      const t0 = performance.now();
      const run = await runCodex({ baseUrl: `${proxy.origin}/v1`, apiKey: agent.key, prompt: 'Run echo one, then echo two.', timeoutMs: BUDGET_RUN_TIMEOUT_MS, model: CODEX_MODEL, maxRetries: 0 });
      const ms = Math.round(performance.now() - t0);
      const proxied = proxy.exchanges.slice(proxiedFrom);
      const refusals = proxied.filter((x) => x.status === 429);
      console.info(
        `[codex ${c.kind}] budget: ${ms} ms, exit ${run.code}, timedOut ${run.timedOut}, requests ${proxied.map((x) => x.status).join(',')}, ` +
          `429 headers ${JSON.stringify(refusals[0] ? { 'retry-after': refusals[0].responseHeaders['retry-after'], 'x-should-retry': refusals[0].responseHeaders['x-should-retry'], 'x-agentgw-budget-reset': refusals[0].responseHeaders['x-agentgw-budget-reset'] } : null)}, ` +
          `codex error: ${JSON.stringify(run.error)}, error events: ${JSON.stringify((run.events as any[]).filter((e) => e.type === 'error').map((e) => e.message))}`,
      );

      // The gateway: the first turn ran, the second was refused with the CONTRACT's budget 429 (Retry-After is not pinned
      // here: its value, the seconds until the budget resets, is what keeps Codex waiting; see the Codex expectations below).
      expect(proxied[0]?.status).toBe(200);
      expect(refusals.length).toBeGreaterThanOrEqual(1);
      const refusal = refusals[0]!;
      expect(JSON.parse(refusal.responseText)).toMatchObject({ error: { code: 'daily_budget_exceeded' } });
      expect(refusal.responseHeaders['x-should-retry']).toBe('false');
      expect(refusal.responseHeaders['x-agentgw-budget-reset']).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00Z$/);
      // One upstream call: the refused turn never reached it.
      expect(upstream.count() - from).toBe(1);

      // Codex: it ran the first command, then stopped with exit 1 and a message. Codex ignores x-should-retry and waits
      // CONTRACT's Retry-After (the seconds until the budget resets) before each of its stream_max_retries retries, so
      // this run sets them to 0, as the README advises for unattended runs.
      expect(run.timedOut, describeRun(run)).toBe(false);
      expect(run.code, describeRun(run)).toBe(1);
      expect(codexCommands(run.events).map((x) => x.command)).toHaveLength(1);
      expect(refusals).toHaveLength(1);
      expect(proxied).toHaveLength(2);
      expect(run.error, describeRun(run)).toMatch(/429|budget|usage limit|quota/i);

      const trace = await traceOf(run.threadId!);
      expect(trace.requests.map((s: any) => [s.endpoint, s.http_status, s.error_code])).toEqual([
        ['responses', 200, null],
        ...refusals.map(() => ['responses', 429, 'daily_budget_exceeded']),
      ]);
      expect(trace.requests[0].cost).toBeCloseTo(upstream.billed(c.heavyUsage, c.price).cost, 9);
      const a = await admin.call('GET', `/agents/${agent.id}`);
      expect(a.spend.day).toBeCloseTo(trace.cost, 9);
      expect(a.spend.day).toBeLessThanOrEqual(BUDGET_DAILY);
    },
    TEST_TIMEOUT_MS,
  );
});
