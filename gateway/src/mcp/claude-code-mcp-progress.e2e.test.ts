// The real Claude Code CLI (headless, offline) with an --mcp-config naming one server through /mcp/<server>, as the
// README shows it: it calls that server's tool under the server's own name, the upstream reports progress while it
// runs (Claude Code asks for it), and the tool's result reaches the model.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { adminApi, eventually, type TraceDetail } from '../test-support/admin-api.js';
import { adminClient } from '../test-support/admin.js';
import { CLAUDE_CODE_OFFLINE_ENV, claudeCodeBinary, runClaudeCode, toolResults, toolRoundTripScript } from '../test-support/claude-code.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic } from '../test-support/scripted-anthropic.js';
import { type BuildServer, startBuildServer } from './__fixtures__/build-mcp-server.js';

let builds: BuildServer;
let model: ScriptedAnthropic;
let gw: TestGateway;
let dir: string;

beforeAll(async () => {
  builds = await startBuildServer();
  // One tool round trip: call the build tool (under whichever name Claude Code offers it), then answer with what it returned.
  model = await startScriptedAnthropic((body, i, headers) => {
    const name = (body?.tools ?? []).map((t: { name: string }) => t.name).find((n: string) => n.endsWith('run_build')) ?? 'run_build';
    return toolRoundTripScript({ name, input: { target: 'web' } }, (b) => `The build said: ${JSON.stringify(toolResults(b)[0]?.content)}`)(body, i, headers);
  });
  gw = await startTestGateway({
    config: {
      providers: { anthropic: { type: 'anthropic', base_url: model.url, api_key: 'sk-ant-upstream-secret' } },
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5'] },
      mcp_servers: { builds: { url: builds.url } },
    },
  });
  dir = await mkdtemp(join(tmpdir(), 'agentgw-cc-mcp-progress-'));
});
afterAll(async () => {
  await gw?.close();
  await model?.close();
  await builds?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('Claude Code uses a tool through /mcp/<server> whose upstream reports progress; the result reaches the model', async () => {
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('cc-builds', { tenant_id: 'acme', allowed_tools: ['builds/run_build'] });
  const agent = await admin.agent('acme', 'claude-code-builds', 'cc-builds');
  const trace = `cc-mcp-progress-${Date.now()}`;
  // The README's .mcp.json for /mcp/<server>.
  const mcpConfig = join(dir, 'mcp.json');
  await writeFile(
    mcpConfig,
    JSON.stringify({ mcpServers: { builds: { type: 'http', url: `${gw.url}/mcp/builds`, headers: { Authorization: `Bearer ${agent.api_key}`, 'X-Agent-Trace-Id': trace } } } }),
  );
  const run = await runClaudeCode({
    baseUrl: gw.url,
    apiKey: agent.api_key,
    prompt: 'Run the build of web and tell me its id.',
    env: { ANTHROPIC_CUSTOM_HEADERS: `X-Agent-Trace-Id: ${trace}` },
    allowedTools: 'mcp__builds__run_build',
    args: ['--mcp-config', mcpConfig, '--strict-mcp-config'],
    timeoutMs: 60_000,
  });
  const why = `exit ${run.code}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;
  expect(run.json, why).not.toBeNull();
  expect(run.json!.is_error, why).toBe(false);
  // The model was offered the server's tool under its own name (no agentgw prefix), and read what it returned.
  expect(model.messageRequests[0]!.body.tools.map((t: { name: string }) => t.name)).toContain('mcp__builds__run_build');
  expect(JSON.stringify(toolResults(model.messageRequests.at(-1)!.body))).toContain('build web finished: id bld-7f3a after 3 steps');
  expect(run.json!.result, why).toContain('bld-7f3a');
  // Claude Code asked for progress: its token reached the upstream through agentgw, which sent its three notifications back
  // on the call's stream, and the call still answered.
  expect(builds.calls).toHaveLength(1);
  expect(builds.calls[0]!.token, 'Claude Code sent no progress token').not.toBeUndefined();
  expect(builds.calls[0]!.sent).toBe(3);
  const api = adminApi(gw.adminUrl, gw.adminKey);
  const detail = await eventually(async () => {
    const res = await api<TraceDetail>('GET', `/traces/${trace}`);
    return res.status === 200 && res.body.requests.some((s) => s.endpoint === 'mcp') ? res.body : undefined;
  }, 10_000, 'the trace with the tool step');
  expect(detail.requests.map((s) => [s.endpoint, s.tool ?? null, s.status])).toContainEqual(['mcp', 'builds/run_build', 'ok']);
}, 90_000);

test("the README's `claude mcp add --transport http ... --header` for /mcp: Claude Code calls the federated tool", async () => {
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  const agent = await admin.agent('acme', 'claude-code-added', 'cc-builds');
  const home = await mkdtemp(join(dir, 'home-'));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ...CLAUDE_CODE_OFFLINE_ENV };
  const args = ['mcp', 'add', '--transport', 'http', '-s', 'user', 'agentgw', `${gw.url}/mcp`, '--header', `Authorization: Bearer ${agent.api_key}`];
  await new Promise<void>((resolve, reject) => execFile(claudeCodeBinary(), args, { env, timeout: 30_000 }, (err, _out, stderr) => (err ? reject(new Error(`claude mcp add: ${stderr}`)) : resolve())));
  const before = builds.calls.length;
  const run = await runClaudeCode({
    baseUrl: gw.url,
    apiKey: agent.api_key,
    home,
    prompt: 'Run the build of web and tell me its id.',
    allowedTools: 'mcp__agentgw__builds__run_build',
    timeoutMs: 60_000,
  });
  const why = `exit ${run.code}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;
  expect(run.json, why).not.toBeNull();
  expect(run.json!.is_error, why).toBe(false);
  expect(run.json!.result, why).toContain('bld-7f3a');
  // Through /mcp the tool is <server>__<tool>, which Claude Code prefixes with the name given to `claude mcp add`.
  expect(model.messageRequests.at(-1)!.body.tools.map((t: { name: string }) => t.name)).toContain('mcp__agentgw__builds__run_build');
  expect(builds.calls.slice(before).map((c) => c.sent)).toEqual([3]);
}, 90_000);
