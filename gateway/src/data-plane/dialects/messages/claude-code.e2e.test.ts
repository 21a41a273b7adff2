// The real Claude Code CLI (2.1.197, headless, offline) through agentgw's /v1/messages, on an Anthropic-format upstream
// (native) and on an OpenAI-format upstream (translated through Chat Completions): a multi-turn tool-using task runs to
// completion as one trace billed at the configured prices; a spent daily budget stops it with a 429 it does not retry;
// rules.clamp_output lets it finish on a budget smaller than one 64k-token worst case.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type ClaudeCodeRun, runClaudeCode } from '../../../test-support/claude-code.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type AnthropicUsage, type Reply, type ScriptedAnthropic, startScriptedAnthropic, textReply, toolUseReply } from '../../../test-support/scripted-anthropic.js';
import {
  type ChatScriptReply,
  type ChatUsage,
  type ScriptedOpenAI,
  chatTextReply,
  chatToolCallReply,
  startScriptedOpenAI,
} from '../../../test-support/scripted-openai.js';

const RUN_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 90_000;

/** USD per million tokens, as configured. */
interface Price {
  input: number;
  output: number;
  cached_input: number;
  cache_write_input?: number;
  cache_write_1h_input?: number;
}

/** One tool call of the task, whatever the upstream's format. */
interface ToolStep {
  name: string;
  input: Record<string, unknown>;
}

/** The usage one upstream turn reports, and what agentgw should bill for it. */
interface TurnUsage {
  anthropic?: AnthropicUsage;
  openai?: ChatUsage;
}

/** What the tests need from either upstream. */
interface Upstream {
  /** Upstream model requests received so far. */
  count(): number;
  /** The bodies received from index `from` on. */
  bodiesFrom(from: number): any[];
  /** Answer: the next tool step while some remain, else the final text (given the last tool result's text). */
  setTask(steps: ToolStep[], finalText: (lastToolOutput: string) => string, usageOf?: (turn: number) => TurnUsage | undefined): void;
  /** The number of tool results in a request the upstream received (the turn it answers). */
  turnOf(body: any): number;
  /** The output-limit field of a request the upstream received. */
  maxTokensOf(body: any): number | undefined;
  /** The expected cost (USD) of one turn's reported usage at `price`, and its prompt / cached token counts. */
  billed(u: TurnUsage, price: Price): { cost: number; prompt: number; cached: number; completion: number };
  close(): Promise<void>;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: any) => (typeof b === 'string' ? b : typeof b?.text === 'string' ? b.text : '')).join('');
  return '';
}

async function anthropicUpstream(): Promise<{ upstream: Upstream; raw: ScriptedAnthropic }> {
  let steps: ToolStep[] = [];
  let finalText: (out: string) => string = () => 'done';
  let usageOf: (turn: number) => TurnUsage | undefined = () => undefined;
  const turnOf = (body: any): number => {
    let n = 0;
    for (const m of Array.isArray(body?.messages) ? body.messages : []) {
      if (m?.role === 'user' && Array.isArray(m.content)) n += m.content.filter((b: any) => b?.type === 'tool_result').length;
    }
    return n;
  };
  const raw = await startScriptedAnthropic((body): Reply => {
    const turn = turnOf(body);
    const usage = usageOf(turn)?.anthropic;
    const hasTools = Array.isArray(body?.tools) && body.tools.length > 0;
    const step = hasTools ? steps[turn] : undefined;
    if (step) return toolUseReply(step.name, step.input, undefined, usage);
    const last = body?.messages?.at(-1);
    const results = Array.isArray(last?.content) ? last.content.filter((b: any) => b?.type === 'tool_result') : [];
    return textReply(finalText(textOf(results.at(-1)?.content)), usage);
  });
  const upstream: Upstream = {
    count: () => raw.messageRequests.length,
    bodiesFrom: (from) => raw.messageRequests.slice(from).map((r) => r.body),
    setTask(s, f, u) {
      steps = s;
      finalText = f;
      usageOf = u ?? (() => undefined);
    },
    turnOf,
    maxTokensOf: (body) => body?.max_tokens,
    billed(u, price) {
      const a = u.anthropic!;
      const input = a.input_tokens ?? 0;
      const read = a.cache_read_input_tokens ?? 0;
      const written = a.cache_creation_input_tokens ?? 0;
      const written1h = a.cache_creation?.ephemeral_1h_input_tokens ?? 0;
      const out = a.output_tokens ?? 0;
      const micro =
        input * price.input +
        read * price.cached_input +
        (written - written1h) * (price.cache_write_input ?? price.input) +
        written1h * (price.cache_write_1h_input ?? price.cache_write_input ?? price.input) +
        out * price.output;
      return { cost: micro / 1e6, prompt: input + read + written, cached: read, completion: out };
    },
    close: () => raw.close(),
  };
  return { upstream, raw };
}

async function openaiUpstream(): Promise<{ upstream: Upstream; raw: ScriptedOpenAI }> {
  let steps: ToolStep[] = [];
  let finalText: (out: string) => string = () => 'done';
  let usageOf: (turn: number) => TurnUsage | undefined = () => undefined;
  const turnOf = (body: any): number => (Array.isArray(body?.messages) ? body.messages.filter((m: any) => m?.role === 'tool').length : 0);
  const raw = await startScriptedOpenAI((body): ChatScriptReply => {
    const turn = turnOf(body);
    const usage = usageOf(turn)?.openai;
    const hasTools = Array.isArray(body?.tools) && body.tools.length > 0;
    const step = hasTools ? steps[turn] : undefined;
    if (step) return chatToolCallReply(step.name, step.input, undefined, usage);
    const last = body?.messages?.at(-1);
    return chatTextReply(finalText(last?.role === 'tool' ? textOf(last.content) : ''), usage);
  });
  const upstream: Upstream = {
    count: () => raw.chatRequests.length,
    bodiesFrom: (from) => raw.chatRequests.slice(from).map((r) => r.body),
    setTask(s, f, u) {
      steps = s;
      finalText = f;
      usageOf = u ?? (() => undefined);
    },
    turnOf,
    maxTokensOf: (body) => body?.max_completion_tokens ?? body?.max_tokens,
    billed(u, price) {
      const o = u.openai!;
      const cached = o.prompt_tokens_details?.cached_tokens ?? 0;
      const micro = (o.prompt_tokens - cached) * price.input + cached * price.cached_input + o.completion_tokens * price.output;
      return { cost: micro / 1e6, prompt: o.prompt_tokens, cached, completion: o.completion_tokens };
    },
    close: () => raw.close(),
  };
  return { upstream, raw };
}

interface Case {
  name: string;
  start(): Promise<{ upstream: Upstream; raw: ScriptedAnthropic | ScriptedOpenAI }>;
  /** The gateway's providers and `claude-*` alias for this upstream. */
  config(url: string): Record<string, unknown>;
  /** The target's provider / model as the trace names them. */
  provider: string;
  model: string;
  price: Price;
  /** The usage each turn of the main task reports (varied, cache reads and writes included). */
  usage(turn: number): TurnUsage;
  /** A small usage (clamp test: leaves the budget almost whole). */
  smallUsage: TurnUsage;
  /** A usage that spends most of `budget.daily` in one turn. */
  heavyUsage: TurnUsage;
  /**
   * Budget test: the first turn's worst case (~78k prompt tokens bound, max_tokens 64000 capped by the model's
   * max_output_tokens) fits `daily`; after heavyUsage is billed, the second turn's does not.
   */
  budget: { daily: number };
  /** Clamp test: a daily budget below one full worst case, far above the clamped one. */
  clampBudget: number;
  /** The output limit the upstream gets when nothing clamps it. */
  unclampedMaxTokens: number;
}

const NATIVE_PRICE: Price = { input: 1, output: 10, cached_input: 0.1, cache_write_input: 1.25, cache_write_1h_input: 2 };
const OPENAI_PRICE: Price = { input: 2, output: 8, cached_input: 1 };

const CASES: Case[] = [
  {
    name: 'native: Anthropic-format upstream (claude-* -> anthropic/claude-sonnet-4-5)',
    start: anthropicUpstream,
    config: (url) => ({
      providers: { anthropic: { type: 'anthropic', base_url: url, api_key: 'sk-ant-upstream-secret' } },
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5'] },
      prices: { 'anthropic/claude-sonnet-4-5': { ...NATIVE_PRICE, max_output_tokens: 64_000 } },
    }),
    provider: 'anthropic',
    model: 'anthropic/claude-sonnet-4-5',
    price: NATIVE_PRICE,
    usage: (turn) => ({
      anthropic: {
        input_tokens: 100 + turn,
        cache_read_input_tokens: 2000 * turn,
        cache_creation_input_tokens: 500 + 10 * turn,
        cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 200 + 10 * turn },
        output_tokens: 40 + turn,
      },
    }),
    smallUsage: { anthropic: { input_tokens: 1000, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 20 } },
    // worst case of a turn: ~78k x $2 (1h cache-write rate) + 64,000 x $10 = ~$0.80; turn 1 bills ~$0.30.
    heavyUsage: { anthropic: { input_tokens: 1000, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 30_000 } },
    budget: { daily: 1 },
    clampBudget: 0.5,
    unclampedMaxTokens: 64_000,
  },
  {
    name: 'translated: OpenAI-format upstream (claude-* -> openai/gpt-4o)',
    start: openaiUpstream,
    config: (url) => ({
      providers: { openai: { type: 'openai', base_url: url, api_key: 'sk-openai-upstream-secret' } },
      models: { 'claude-*': ['openai/gpt-4o'] },
      prices: { 'openai/gpt-4o': OPENAI_PRICE },
    }),
    provider: 'openai',
    model: 'openai/gpt-4o',
    price: OPENAI_PRICE,
    usage: (turn) => ({ openai: { prompt_tokens: 3000 + 100 * turn, completion_tokens: 30 + turn, prompt_tokens_details: { cached_tokens: 1000 * turn } } }),
    smallUsage: { openai: { prompt_tokens: 1000, completion_tokens: 20 } },
    // worst case of a turn: ~78k x $2 + 16,384 (gpt-4o's max output) x $8 = ~$0.29; turn 1 bills ~$0.16.
    heavyUsage: { openai: { prompt_tokens: 1000, completion_tokens: 20_000 } },
    budget: { daily: 0.4 },
    clampBudget: 0.25,
    unclampedMaxTokens: 64_000,
  },
];

describe.each(CASES)('Claude Code through agentgw, $name', (c) => {
  let gw: TestGateway;
  let upstream: Upstream;
  let admin: ReturnType<typeof adminClient>;
  let agentCounter = 0;

  beforeAll(async () => {
    const started = await c.start();
    upstream = started.upstream;
    gw = await startTestGateway({ config: c.config(started.raw.url) });
    admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  async function newAgent(policy?: Record<string, unknown>): Promise<{ id: string; key: string }> {
    agentCounter += 1;
    let policyId: string | undefined;
    if (policy) {
      policyId = `cc-${c.provider}-${agentCounter}`;
      await admin.policy(policyId, { tenant_id: 'acme', ...policy });
    }
    const agent = await admin.agent('acme', `claude-code-${agentCounter}`, policyId);
    return { id: agent.id, key: agent.api_key };
  }

  async function traceOf(agentId: string): Promise<any> {
    await gw.runtime.dataPlane.usage.flush();
    const list = await admin.call('GET', `/traces?agent_id=${agentId}`);
    expect(list.data).toHaveLength(1);
    return admin.call('GET', `/traces/${encodeURIComponent(list.data[0].trace_id)}`);
  }

  function describeRun(run: ClaudeCodeRun): string {
    return `exit ${run.code} signal ${run.signal} timedOut ${run.timedOut}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;
  }

  test(
    'a multi-turn tool-using task runs to completion: one trace, every step billed at the configured price',
    async () => {
      const cwd = await mkdtemp(join(tmpdir(), 'agentgw-cc-task-'));
      try {
        const note = join(cwd, 'note.txt');
        upstream.setTask(
          [
            { name: 'Write', input: { file_path: note, content: 'gateway-note-4242\n' } },
            { name: 'Bash', input: { command: `cat ${note}`, description: 'Print the note' } },
          ],
          (out) => `The note says: ${out.trim()}`,
          (turn) => c.usage(turn),
        );
        const from = upstream.count();
        const agent = await newAgent();
        const t0 = performance.now();
        const run = await runClaudeCode({ baseUrl: gw.url, apiKey: agent.key, prompt: 'Write gateway-note-4242 to note.txt, then cat it and tell me what it says.', cwd, timeoutMs: RUN_TIMEOUT_MS });
        const ms = Math.round(performance.now() - t0);
        expect(run.code, describeRun(run)).toBe(0);
        expect(run.json, describeRun(run)).not.toBeNull();
        const json = run.json!;
        expect(json.is_error, describeRun(run)).toBe(false);
        expect(json.result).toBe('The note says: gateway-note-4242');
        expect(json.num_turns).toBe(3);
        expect(await readFile(note, 'utf8')).toBe('gateway-note-4242\n');

        const bodies = upstream.bodiesFrom(from);
        expect(bodies.map((b) => upstream.turnOf(b))).toEqual([0, 1, 2]);
        for (const b of bodies) expect(b.model).toBe(c.model.split('/')[1]);

        const trace = await traceOf(agent.id);
        expect(trace.trace_id).toBe(json.session_id);
        // Claude Code's x-claude-code-session-id is also in metadata.user_id, passed on as sent to a native upstream.
        if (c.provider === 'anthropic') for (const b of bodies) expect(JSON.parse(b.metadata.user_id).session_id).toBe(trace.trace_id);
        expect(trace.request_count).toBe(3);
        expect(trace.error_count).toBe(0);
        expect(trace.requests).toHaveLength(3);
        let total = 0;
        trace.requests.forEach((step: any, turn: number) => {
          const want = upstream.billed(c.usage(turn), c.price);
          total += want.cost;
          expect(step, `step ${turn}`).toMatchObject({ endpoint: 'messages', stream: true, status: 'ok', http_status: 200, provider: c.provider, model: c.model });
          expect(step.prompt_tokens, `step ${turn} prompt_tokens`).toBe(want.prompt);
          expect(step.cached_tokens, `step ${turn} cached_tokens`).toBe(want.cached);
          expect(step.completion_tokens, `step ${turn} completion_tokens`).toBe(want.completion);
          expect(step.cost, `step ${turn} cost`).toBeCloseTo(want.cost, 9);
        });
        expect(trace.cost).toBeCloseTo(total, 9);
        console.info(`[claude-code ${c.provider}] task: ${ms} ms, ${bodies.length} upstream requests`);
      } finally {
        await rm(cwd, { recursive: true, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'a spent daily budget stops it with a 429 Claude Code reports and does not retry',
    async () => {
      upstream.setTask(
        [
          { name: 'Bash', input: { command: 'echo one', description: 'first' } },
          { name: 'Bash', input: { command: 'echo two', description: 'second' } },
        ],
        () => 'should not get here',
        (turn) => (turn === 0 ? c.heavyUsage : c.smallUsage),
      );
      const from = upstream.count();
      const agent = await newAgent({ daily_budget: c.budget.daily });
      const t0 = performance.now();
      const run = await runClaudeCode({ baseUrl: gw.url, apiKey: agent.key, prompt: 'Run echo one, then echo two.', timeoutMs: RUN_TIMEOUT_MS });
      const ms = Math.round(performance.now() - t0);
      expect(run.timedOut, describeRun(run)).toBe(false);
      expect(run.json, describeRun(run)).not.toBeNull();
      expect(run.json!.is_error, describeRun(run)).toBe(true);
      expect(run.json!.api_error_status, describeRun(run)).toBe(429);
      expect(run.json!.result).toContain('429');
      // One upstream call (the first turn); the refused second turn was asked once, never retried.
      expect(upstream.count() - from).toBe(1);
      const trace = await traceOf(agent.id);
      expect(trace.requests.map((s: any) => [s.http_status, s.error_code])).toEqual([
        [200, null],
        [429, 'daily_budget_exceeded'],
      ]);
      expect(trace.requests[0].cost).toBeCloseTo(upstream.billed(c.heavyUsage, c.price).cost, 9);
      console.info(`[claude-code ${c.provider}] budget 429: ${ms} ms, exit ${run.code}`);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'with rules.clamp_output, a daily budget below one 64k-token worst case still lets it finish, on lowered output limits',
    async () => {
      upstream.setTask([{ name: 'Bash', input: { command: 'echo clamped-ok', description: 'echo' } }], (out) => `It printed ${out.trim()}`, () => c.smallUsage);
      const from = upstream.count();
      // Without clamp_output the same budget refuses the first turn.
      const refused = await newAgent({ daily_budget: c.clampBudget });
      const refusedRun = await runClaudeCode({ baseUrl: gw.url, apiKey: refused.key, prompt: 'Run echo clamped-ok.', timeoutMs: RUN_TIMEOUT_MS });
      expect(refusedRun.json?.api_error_status, describeRun(refusedRun)).toBe(429);
      expect(upstream.count()).toBe(from);

      const agent = await newAgent({ daily_budget: c.clampBudget, rules: { clamp_output: true } });
      const t0 = performance.now();
      const run = await runClaudeCode({ baseUrl: gw.url, apiKey: agent.key, prompt: 'Run echo clamped-ok.', timeoutMs: RUN_TIMEOUT_MS });
      const ms = Math.round(performance.now() - t0);
      expect(run.code, describeRun(run)).toBe(0);
      expect(run.json?.is_error, describeRun(run)).toBe(false);
      expect(run.json?.result).toBe('It printed clamped-ok');
      const bodies = upstream.bodiesFrom(from);
      expect(bodies).toHaveLength(2);
      for (const b of bodies) {
        const max = upstream.maxTokensOf(b);
        expect(max).toBeGreaterThanOrEqual(256);
        expect(max).toBeLessThan(c.unclampedMaxTokens);
      }
      const trace = await traceOf(agent.id);
      expect(trace.requests.map((s: any) => s.http_status)).toEqual([200, 200]);
      console.info(`[claude-code ${c.provider}] clamp: ${ms} ms, upstream max tokens ${bodies.map((b) => upstream.maxTokensOf(b)).join(', ')}`);
    },
    TEST_TIMEOUT_MS * 2,
  );
});
