import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { TraceSummary as TraceSummarySchema } from '@agentgw/gateway/contract';
import type { TraceDetail, TraceSummary, UsageRow } from '../admin-client/types.js';
import { duration, usd } from '../ui/format-usage.js';
import { admin, chat, waitForTrace } from './__fixtures__/gateway-traffic.js';
import { runCli, serveGateway, startCli, type ServedGateway } from './__fixtures__/harness.js';

/** --json prints the contract's documents as they are. */
const SUMMARY_FIELDS = Object.keys(TraceSummarySchema.shape).sort();

/** A step row of the plain timeline: number, model, status, tokens, cost, start, latency, ttft, bar. */
const STEP_ROW = /^\s*(\d+)\s{2}(\S+)\s+(ok|blocked \d+ \S+|error \d+ \S+)\s+(\d+)\/(\d+)\s+(\$[\d.]+)\s+\+(\S+)\s+(\S+)\s+(\S+)\s+\|(.+)\|$/;

// One gateway and one agent run for the whole file: a plain call, a streamed call with PII redacted, a repeat the policy blocks.
describe.sequential('traces, usage and admin keys against a real server', () => {
  let gw: ServedGateway;
  let agentId: string;
  let agentKey: string;
  let trace: TraceDetail;
  const cli = (...args: string[]) => runCli(args, gw.env);

  beforeAll(async () => {
    gw = await serveGateway();
    await admin(gw, 'POST', '/tenants', { id: 'obs', name: 'Observability' });
    await admin(gw, 'PUT', '/policies/careful', { tenant_id: 'obs', rules: { pii: 'redact', retry_block: { max_repeats: 1, window_seconds: 300 } } });
    const agent = await admin<{ id: string; api_key: string }>(gw, 'POST', '/agents', { name: 'bot', tenant_id: 'obs', policy_id: 'careful' });
    agentId = agent.id;
    agentKey = agent.api_key;
    expect(await chat(gw, agentKey, 'run-1')).toBe(200);
    expect(await chat(gw, agentKey, 'run-1', { stream: true, content: 'Mail a story to jane.doe@example.com please' })).toBe(200);
    expect(await chat(gw, agentKey, 'run-1')).toBe(403);
    trace = await waitForTrace(gw, 'run-1', 3);
  });

  afterAll(async () => {
    if (gw) expect(await gw.stop()).toBe(0);
  });

  it('traces list --json: the contract summary of each trace', async () => {
    const res = await cli('traces', 'list', '--json', '--agent', agentId);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const list = JSON.parse(res.stdout) as TraceSummary[];
    expect(list).toHaveLength(1);
    expect(Object.keys(list[0]).sort()).toEqual(SUMMARY_FIELDS);
    expect(list[0]).toMatchObject({ trace_id: 'run-1', tenant_id: 'obs', agent_id: agentId, request_count: 3, error_count: 1 });
  });

  it('--agent takes TENANT/NAME as well as the id; an unknown agent is an error, not an empty list', async () => {
    const byName = await cli('traces', 'list', '--json', '--agent', 'obs/bot');
    expect(byName.stderr).toBe('');
    expect((JSON.parse(byName.stdout) as TraceSummary[]).map((t) => t.trace_id)).toEqual(['run-1']);

    const unknown = await cli('traces', 'list', '--agent', 'obs/nobody');
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe('Error: no agent named nobody in tenant obs\n');
    const unknownId = await cli('traces', 'list', '--agent', 'agt_0000000000000000');
    expect(unknownId.code).toBe(1);
    expect(unknownId.stderr).toMatch(/^Error: no agent with id agt_0000000000000000/);
    const tail = await cli('traces', 'tail', '--agent', 'nope/bot', '--max-polls', '1');
    expect(tail.code).toBe(1);
    expect(tail.stderr).toBe('Error: no agent named bot in tenant nope\n');
  });

  it('traces list: a table naming agents tenant/name; a bad --since is a flag error before any request', async () => {
    const res = await cli('traces', 'list', '--tenant', 'obs');
    expect(res.stdout.split('\n')[0]).toMatch(/^TRACE\s+AGENT\s+STARTED\s+DURATION\s+REQUESTS\s+ERRORS\s+TOKENS\s+COST$/);
    expect(res.stdout.split('\n')[1]).toMatch(/^run-1\s+obs\/bot\s+\S+Z\s+\S+\s+3\s+1\s+\d+\/\d+\s+\$/);
    expect(res.stdout).not.toContain(agentId);
    const bad = await runCli(['traces', 'list', '--since', 'yesterday'], { AGENTGW_ADMIN_URL: 'http://127.0.0.1:9/api', AGENTGW_ADMIN_KEY: 'x' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('Error: --since must be an RFC 3339 time such as 2026-01-31T00:00:00Z, not "yesterday"\n');
  });

  it('traces show: one row per step on a shared time axis, then the totals', async () => {
    const res = await cli('traces', 'show', 'run-1');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('Trace run-1');
    expect(lines[1]).toBe(`agent obs/bot, ${trace.started_at} to ${trace.ended_at}`);
    expect(lines[3]).toMatch(/^STEP\s+MODEL\s+STATUS\s+TOKENS\s+COST\s+START\s+LATENCY\s+TTFT\s+TIMELINE$/);
    const rows = lines.map((l) => STEP_ROW.exec(l)).filter((m) => m !== null);
    expect(rows.map((m) => [m[1], m[2], m[3]])).toEqual([
      ['1', 'mock/mock-1', 'ok'],
      ['2', 'mock/mock-1', 'ok'],
      ['3', 'mock/mock-1', 'blocked 403 retry_blocked'],
    ]);
    rows.forEach((m, i) => {
      const step = trace.requests[i];
      expect([Number(m[4]), Number(m[5])]).toEqual([step.prompt_tokens, step.completion_tokens]);
      expect(m[10]).toHaveLength(40);
      expect(m[10].trim()).toMatch(/^[░█]+$/);
    });
    // only the streamed step has a time to first token
    expect(rows.map((m) => m[9] !== '-')).toEqual([false, true, false]);
    // steps start in order along the axis
    const starts = rows.map((m) => m[10].search(/\S/));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    const tokens = trace.prompt_tokens + trace.completion_tokens;
    const wall = duration(Date.parse(trace.ended_at) - Date.parse(trace.started_at));
    expect(lines).toContain(
      `Total: 3 requests, 1 error (1 blocked), ${tokens} tokens (${trace.prompt_tokens} prompt, ${trace.completion_tokens} completion), ${usd(trace.cost)}, wall time ${wall}`,
    );
    expect(lines[lines.length - 1]).toBe('PII: email (step 2)');
  });

  it('traces show --json (and its alias get) print the API document', async () => {
    const res = await cli('traces', 'show', 'run-1', '--json');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual(trace);
    const alias = await cli('traces', 'get', 'run-1', '--json');
    expect(JSON.parse(alias.stdout)).toEqual(trace);
  });

  it('traces show of an unknown trace is one sentence', async () => {
    const res = await cli('traces', 'show', 'no-such-run');
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^Error: .*no-such-run.*\(404 trace_not_found\)\n$/);
  });

  it('usage: requests, errors, tokens and cost per agent (by name; JSON keeps the id), model and day', async () => {
    const byAgent = JSON.parse((await cli('usage', '--json', '--tenant', 'obs')).stdout) as UsageRow[];
    expect(byAgent).toEqual([
      { key: agentId, requests: 3, errors: 1, prompt_tokens: trace.prompt_tokens, completion_tokens: trace.completion_tokens, cost: trace.cost },
    ]);
    const table = await cli('usage', '--tenant', 'obs');
    // The table has every column --json has: errors too.
    expect(table.stdout.split('\n')[0]).toMatch(/^AGENT\s+REQUESTS\s+ERRORS\s+PROMPT\s+COMPLETION\s+COST$/);
    expect(table.stdout.split('\n')[1]).toMatch(/^obs\/bot\s+3\s+1\s+/);
    const byModel = JSON.parse((await cli('usage', '--json', '--group-by', 'model')).stdout) as UsageRow[];
    expect(byModel.find((r) => r.key === 'mock/mock-1')?.requests).toBe(3);
    const today = new Date().toISOString().slice(0, 10);
    const byDay = await cli('usage', '--group-by', 'day', '--from', `${today}T00:00:00Z`);
    expect(byDay.stdout.split('\n')[0]).toMatch(/^DAY\s+REQUESTS\s+ERRORS\s+PROMPT\s+COMPLETION\s+COST$/);
    expect(byDay.stdout).toMatch(new RegExp(`^${today}\\s+3\\s+1\\s+`, 'm'));
  });

  it('traces tail --json prints a trace made while it runs, and again only when it changes', async () => {
    const tail = startCli(['traces', 'tail', '--json', '--interval', '0.1', '--max-polls', '60', '--tenant', 'obs'], gw.env);
    onTestFinished(() => tail.signal('SIGKILL'));
    // the tail reads its own start time when it begins: give the process time to start
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await chat(gw, agentKey, 'live-1')).toBe(200);
    await tail.waitForStdout(/"trace_id":"live-1"/);
    expect(await chat(gw, agentKey, 'live-1', { stream: true, content: 'And of Italy?' })).toBe(200);
    await tail.waitForStdout(/"trace_id":"live-1"[^\n]*"request_count":2/);
    // it ends by itself after its 60 polls
    const res = await tail.exited;
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(new Set(lines).size).toBe(lines.length);
    const live = lines.map((l) => JSON.parse(l) as TraceSummary).filter((t) => t.trace_id === 'live-1');
    expect(live.map((t) => t.request_count)).toEqual([1, 2]);
    expect(Object.keys(live[0]).sort()).toEqual(SUMMARY_FIELDS);
  });

  it('traces tail names the agent tenant/name and follows one agent given as TENANT/NAME', async () => {
    const tail = startCli(['traces', 'tail', '--agent', 'obs/bot', '--interval', '0.1', '--max-polls', '60'], gw.env);
    onTestFinished(() => tail.signal('SIGKILL'));
    await tail.waitForStdout(/^TRACE\s+AGENT/);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await chat(gw, agentKey, 'live-2')).toBe(200);
    await tail.waitForStdout(/^live-2\s+obs\/bot\s+1\s+/m);
    tail.signal('SIGINT');
    expect((await tail.exited).code).toBe(0);
  });

  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    it(`traces tail stops on ${sig} with exit 0`, async () => {
      const tail = startCli(['traces', 'tail', '--interval', '0.2'], gw.env);
      onTestFinished(() => tail.signal('SIGKILL'));
      await tail.waitForStdout(/^TRACE\s+AGENT\s+REQUESTS\s+ERRORS\s+TOKENS\s+COST\s+LAST ACTIVITY\n/);
      tail.signal(sig);
      const res = await tail.exited;
      expect(res.code).toBe(0);
      expect(res.stderr).toBe('');
    });
  }

  it('traces stop refuses the rest of a trace; agents suspend|resume TENANT/NAME refuses and lets through the agent', async () => {
    expect(await chat(gw, agentKey, 'to-stop')).toBe(200);
    await waitForTrace(gw, 'to-stop', 1);
    const stopped = await cli('traces', 'stop', 'to-stop', '--reason', 'looping');
    expect(stopped.stderr).toBe('');
    expect(stopped.stdout).toMatch(/^Stopped trace to-stop of tenant obs at \S+: every later request of it gets 403 trace_stopped\.\n$/);
    expect(await chat(gw, agentKey, 'to-stop')).toBe(403);
    expect(await chat(gw, agentKey, 'after-stop')).toBe(200);

    const suspended = await cli('agents', 'suspend', 'obs/bot');
    expect(suspended.stdout).toBe('Suspended agent obs/bot: its key gets 403 agent_suspended until it is resumed.\n');
    expect(await chat(gw, agentKey, 'while-suspended')).toBe(403);
    expect(JSON.parse((await cli('agents', 'get', 'obs/bot', '--json')).stdout)).toMatchObject({ suspended: true });
    expect((await cli('agents', 'resume', 'obs/bot')).code).toBe(0);
    expect(await chat(gw, agentKey, 'after-resume')).toBe(200);
    const unknown = await cli('agents', 'suspend', 'obs/nobody');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('Error: no agent named nobody in tenant obs\n');
  });

  it('admin-keys create prints the key once; list never does; delete revokes it', async () => {
    const created = await cli('admin-keys', 'create', '--name', 'dashboards', '--role', 'viewer', '--tenant', 'obs', '--json');
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout) as { id: string; api_key: string; role: string; tenant_id: string };
    expect(key).toMatchObject({ role: 'viewer', tenant_id: 'obs' });
    expect(key.api_key).toMatch(/^adk_/);

    const viewerEnv = { ...gw.env, AGENTGW_ADMIN_KEY: key.api_key };
    const asViewer = await runCli(['traces', 'list', '--json'], viewerEnv);
    expect(JSON.parse(asViewer.stdout).map((t: TraceSummary) => t.tenant_id)).toEqual(expect.arrayContaining(['obs']));
    const refused = await runCli(['admin-keys', 'create', '--name', 'x', '--role', 'admin'], viewerEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Error: .*\(403 insufficient_role\)\n$/);

    const list = await cli('admin-keys', 'list');
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+ROLE\s+TENANT\s+KEY\s+CREATED$/);
    expect(list.stdout).toMatch(new RegExp(`^${key.id}\\s+dashboards\\s+viewer\\s+obs\\s+adk_`, 'm'));
    expect(list.stdout).not.toContain(key.api_key);
    const listJson = JSON.parse((await cli('admin-keys', 'list', '--json')).stdout) as Record<string, unknown>[];
    expect(listJson.find((k) => k.id === key.id)).not.toHaveProperty('api_key');

    const plain = await cli('admin-keys', 'create', '--name', 'ci', '--role', 'admin');
    expect(plain.stdout).toMatch(/^Created admin key ci \(adk_\w+\), role admin\.\nAdmin key \(shown once; store it now\): adk_\w+\n$/);

    const deleted = await cli('admin-keys', 'delete', key.id);
    expect(deleted.stdout).toBe(`Deleted admin key ${key.id}; it no longer works.\n`);
    expect((await cli('admin-keys', 'list', '--json')).stdout).not.toContain(key.id);
    const revoked = await runCli(['traces', 'list'], viewerEnv);
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toMatch(/401 invalid_api_key/);
  });

  it('admin-keys create checks the role and tenant before asking the server', async () => {
    const res = await runCli(['admin-keys', 'create', '--name', 'x', '--role', 'tenant_admin'], { AGENTGW_ADMIN_URL: 'http://127.0.0.1:9/api', AGENTGW_ADMIN_KEY: 'x' });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('Error: invalid admin key: tenant_id: a tenant_admin key needs a tenant_id\n');
  });
});
