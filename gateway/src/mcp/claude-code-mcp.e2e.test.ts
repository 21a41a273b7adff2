// The real Claude Code CLI (headless, offline) with --mcp-config naming the gateway's /mcp and its model calls through
// /v1/messages: it calls an MCP tool end to end, and the trace shows both kinds of step, in order.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { adminApi, eventually, type TraceDetail } from '../test-support/admin-api.js';
import { adminClient } from '../test-support/admin.js';
import { runClaudeCode, toolResults, toolRoundTripScript } from '../test-support/claude-code.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic } from '../test-support/scripted-anthropic.js';

const STDIO_SERVER = fileURLToPath(new URL('./__fixtures__/stdio-mcp-server.mjs', import.meta.url));

let upstream: ScriptedAnthropic;
let gw: TestGateway;
let dir: string;

beforeAll(async () => {
  // One tool round trip: call the MCP tool, then answer with what it returned.
  upstream = await startScriptedAnthropic(
    toolRoundTripScript({ name: 'mcp__agentgw__local__echo', input: { text: 'hello-from-mcp' } }, (body) => {
      const result = toolResults(body)[0]?.content;
      return `The tool said: ${JSON.stringify(result)}`;
    }),
  );
  gw = await startTestGateway({
    config: {
      providers: { anthropic: { type: 'anthropic', base_url: upstream.url, api_key: 'sk-ant-upstream-secret' } },
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5'] },
      mcp_servers: { local: { command: process.execPath, args: [STDIO_SERVER] } },
    },
  });
  dir = await mkdtemp(join(tmpdir(), 'agentgw-cc-mcp-'));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('Claude Code calls a tool through /mcp; the trace holds its model steps and the tool step', async () => {
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('cc-tools', { tenant_id: 'acme', allowed_tools: ['local/echo'] });
  const agent = await admin.agent('acme', 'claude-code-mcp', 'cc-tools');
  const trace = `cc-mcp-${Date.now()}`;
  const mcpConfig = join(dir, 'mcp.json');
  await writeFile(
    mcpConfig,
    JSON.stringify({ mcpServers: { agentgw: { type: 'http', url: `${gw.url}/mcp`, headers: { Authorization: `Bearer ${agent.api_key}`, 'X-Agent-Trace-Id': trace } } } }),
  );
  const run = await runClaudeCode({
    baseUrl: gw.url,
    apiKey: agent.api_key,
    prompt: 'Use the echo tool with hello-from-mcp and tell me what it said.',
    // The same trace header on the model calls as on /mcp (Claude Code's ANTHROPIC_CUSTOM_HEADERS).
    env: { ANTHROPIC_CUSTOM_HEADERS: `X-Agent-Trace-Id: ${trace}` },
    allowedTools: 'mcp__agentgw__local__echo',
    args: ['--mcp-config', mcpConfig, '--strict-mcp-config'],
    timeoutMs: 60_000,
  });
  const why = `exit ${run.code}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;
  expect(run.json, why).not.toBeNull();
  expect(run.json!.is_error, why).toBe(false);
  expect(run.json!.result, why).toContain('hello-from-mcp');
  // The model was offered the tool under Claude Code's name for it, <mcp server>__<agentgw's name>.
  expect(upstream.messageRequests[0]!.body.tools.map((t: { name: string }) => t.name)).toContain('mcp__agentgw__local__echo');
  const api = adminApi(gw.adminUrl, gw.adminKey);
  const detail = await eventually(async () => {
    const res = await api<TraceDetail>('GET', `/traces/${trace}`);
    return res.status === 200 && res.body.requests.some((s) => s.endpoint === 'mcp') && res.body.requests.length >= 3 ? res.body : undefined;
  }, 10_000, 'the trace with both kinds of step');
  const steps = detail.requests.map((s) => [s.endpoint, s.tool ?? null, s.status]);
  expect(steps).toContainEqual(['mcp', 'local/echo', 'ok']);
  const mcpAt = steps.findIndex((s) => s[0] === 'mcp');
  expect(steps.slice(0, mcpAt).some((s) => s[0] === 'messages')).toBe(true);
  expect(steps.slice(mcpAt + 1).some((s) => s[0] === 'messages')).toBe(true);
}, 90_000);
