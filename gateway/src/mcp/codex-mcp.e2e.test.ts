// The real Codex CLI (`codex exec --json`, headless, offline) with the README's `[mcp_servers.<name>]` tables in its
// config.toml (url, bearer_token_env_var, http_headers): it finds agentgw's tool with its tool_search, calls it through
// /mcp/<server> and through /mcp, and the tool's result reaches the model, in the trace the header names.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { adminApi, eventually, type TraceDetail } from '../test-support/admin-api.js';
import { adminClient } from '../test-support/admin.js';
import { CODEX_ENV_KEY, DEFAULT_CODEX_MODEL, runCodex } from '../test-support/codex.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { functionCallOutputs, inputItems, type ScriptedResponses, startScriptedResponses, textResponse } from '../test-support/scripted-responses.js';
import { type BuildServer, startBuildServer } from './__fixtures__/build-mcp-server.js';

let builds: BuildServer;
let model: ScriptedResponses;
let gw: TestGateway;

/** The tool Codex's tool_search found: its namespace and name (Codex names MCP tools `mcp__<server>` / `<tool>`). */
function foundTool(body: any): { namespace: string; name: string } | undefined {
  for (const out of inputItems(body).filter((i: any) => i?.type === 'tool_search_output')) {
    for (const ns of out.tools ?? []) {
      const t = (ns.tools ?? []).find((x: any) => String(x?.name).endsWith('run_build'));
      if (t) return { namespace: ns.name, name: t.name };
    }
  }
  return undefined;
}

beforeAll(async () => {
  builds = await startBuildServer();
  // Search for the tool, call what was found, then say what it returned.
  model = await startScriptedResponses((body: any) => {
    const outputs = functionCallOutputs(body);
    if (outputs.length > 0) return textResponse(`The build said: ${JSON.stringify(outputs.at(-1)!.output)}`);
    const tool = foundTool(body);
    if (tool) {
      const raw = { id: `fc_${Date.now()}`, call_id: `call_${Date.now()}`, status: 'completed', namespace: tool.namespace, name: tool.name, arguments: JSON.stringify({ target: 'web' }) };
      return { output: [{ type: 'function_call', raw }] };
    }
    return { output: [{ type: 'tool_search_call', raw: { id: `tsc_${Date.now()}`, call_id: `call_ts_${Date.now()}`, execution: 'client', status: 'completed', arguments: { query: 'run build' } } }] };
  });
  gw = await startTestGateway({
    config: {
      providers: { openai: { type: 'openai', base_url: model.url, api_key: 'sk-openai-upstream-secret' } },
      models: { [DEFAULT_CODEX_MODEL]: ['openai/gpt-5.1-codex'] },
      mcp_servers: { builds: { url: builds.url } },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('codex-builds', { tenant_id: 'acme', allowed_tools: ['builds/run_build'] });
});
afterAll(async () => {
  await gw?.close();
  await model?.close();
  await builds?.close();
});

test.each([
  { endpoint: '/mcp/builds', server: 'builds', namespace: 'mcp__builds', tool: 'run_build' },
  { endpoint: '/mcp', server: 'agentgw', namespace: 'mcp__agentgw', tool: 'builds__run_build' },
])("Codex calls a tool through $endpoint configured as the README's config.toml shows; the result reaches the model", async ({ endpoint, server, namespace, tool }) => {
  const agent = await adminClient(gw.adminUrl, gw.adminKey).agent('acme', `codex-${server}`, 'codex-builds');
  const trace = `codex-mcp-${server}-${Date.now()}`;
  const before = { requests: model.responseRequests.length, calls: builds.calls.length };
  const run = await runCodex({
    baseUrl: gw.baseUrl,
    apiKey: agent.api_key,
    prompt: 'Run the build of web and tell me its id.',
    // The key Codex sends is the one its model provider uses too (AGENTGW_KEY).
    configToml: [`[mcp_servers.${server}]`, `url = "${gw.url}${endpoint}"`, `bearer_token_env_var = "${CODEX_ENV_KEY}"`, `http_headers = { "X-Agent-Trace-Id" = "${trace}" }`].join('\n'),
    timeoutMs: 60_000,
  });
  const why = `exit ${run.code}\nerror: ${run.error}\nstderr: ${run.stderr.slice(0, 2000)}`;
  expect(run.code, why).toBe(0);
  const requests = model.responseRequests.slice(before.requests).map((r) => r.body);
  // Codex's tool_search found the tool agentgw lists, under the names it gives MCP tools.
  expect(requests.map(foundTool).find(Boolean)).toEqual({ namespace, name: tool });
  expect(JSON.stringify(functionCallOutputs(requests.at(-1)))).toContain('build web finished: id bld-7f3a after 3 steps');
  expect(run.lastMessage, why).toContain('bld-7f3a');
  expect(builds.calls.slice(before.calls)).toHaveLength(1);
  // The http_headers trace header reached /mcp: the tool step is in that trace.
  const api = adminApi(gw.adminUrl, gw.adminKey);
  const detail = await eventually(async () => {
    const res = await api<TraceDetail>('GET', `/traces/${trace}`);
    return res.status === 200 && res.body.requests.some((s) => s.endpoint === 'mcp') ? res.body : undefined;
  }, 10_000, 'the trace with the tool step');
  expect(detail.requests.map((s) => [s.endpoint, s.tool ?? null, s.status])).toContainEqual(['mcp', 'builds/run_build', 'ok']);
}, 90_000);
