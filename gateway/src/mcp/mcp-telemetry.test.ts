// A tool call through /mcp is an OpenTelemetry `execute_tool` span (GenAI semantic conventions) in its agent trace.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { eventually } from '../test-support/admin-api.js';
import { adminClient } from '../test-support/admin.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { otelTraceId } from '../telemetry/otel.js';
import { REVISION, rpc } from '../test-support/mcp-2026.js';

const STDIO_SERVER = fileURLToPath(new URL('./__fixtures__/stdio-mcp-server.mjs', import.meta.url));

interface OtlpSpan {
  traceId: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

const bodies: any[] = [];
const otlp = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    bodies.push(JSON.parse(Buffer.concat(chunks).toString()));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
let gw: TestGateway;

beforeAll(async () => {
  await new Promise<void>((r) => otlp.listen(0, '127.0.0.1', r));
  gw = await startTestGateway({
    config: { mcp_servers: { local: { command: process.execPath, args: [STDIO_SERVER] } } },
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(otlp.address() as AddressInfo).port}` },
  });
});
afterAll(async () => {
  await gw?.close();
  otlp.close();
});

const spans = (): OtlpSpan[] => bodies.flatMap((b) => b.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans)));
const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v ? Object.values(v)[0] : undefined;
};

test('each tools/call is an execute_tool span in the OpenTelemetry trace of its agent trace', async () => {
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  const agent = await admin.agent('acme', 'tooler');
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${agent.api_key}`, 'x-agent-trace-id': 'otel-tools-1' } },
  });
  const client = new Client({ name: 't', version: '1' });
  await client.connect(transport);
  await client.callTool({ name: 'local__echo', arguments: { text: 'hi' } });
  await client.close();
  const span = await eventually(() => spans().find((s) => s.name === 'execute_tool local__echo'), 10_000, 'the execute_tool span');
  expect(span.traceId).toBe(otelTraceId('acme', 'otel-tools-1'));
  expect(attr(span, 'gen_ai.operation.name')).toBe('execute_tool');
  expect(attr(span, 'gen_ai.tool.name')).toBe('local__echo');
  expect(attr(span, 'mcp.method.name')).toBe('tools/call');
  expect(attr(span, 'agentgw.mcp.server')).toBe('local');
  expect(attr(span, 'gen_ai.conversation.id')).toBe('otel-tools-1');
});

test("a call the tool rules denied carries the decision, the rule and the reason as an event of its span", async () => {
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.call('PUT', '/policies/no-echo', { tenant_id: 'acme', tool_rules: [{ tools: ['local/echo'], when: { text: 'secret*' }, action: 'deny', reason: 'no secrets' }] });
  const agent = await admin.agent('acme', 'guarded', 'no-echo');
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${agent.api_key}`, 'x-agent-trace-id': 'otel-tools-2' } },
  });
  const client = new Client({ name: 't', version: '1' });
  await client.connect(transport);
  await client.callTool({ name: 'local__echo', arguments: { text: 'secret plans' } });
  await client.close();
  const span = await eventually(() => spans().find((s) => s.traceId === otelTraceId('acme', 'otel-tools-2')), 10_000, 'the execute_tool span') as OtlpSpan & {
    events?: Array<{ name: string; attributes: OtlpSpan['attributes'] }>;
  };
  expect(attr(span, 'error.type')).toBe('tool_denied');
  const event = span.events?.find((e) => e.name === 'agentgw.tool_call');
  const eventAttr = (key: string) => Object.values(event?.attributes.find((a) => a.key === key)?.value ?? {})[0];
  expect(eventAttr('gen_ai.tool.name')).toBe('local/echo');
  expect(eventAttr('agentgw.tool.decision')).toBe('denied');
  expect(eventAttr('agentgw.tool.rule.policy_id')).toBe('no-echo');
  expect(Number(eventAttr('agentgw.tool.rule.index'))).toBe(1);
  expect(eventAttr('agentgw.tool.reason')).toBe('no secrets');
});

test('a call of the 2026-07-28 revision (no session) is a span without mcp.session.id, naming the revision', async () => {
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  const agent = await admin.agent('acme', 'stateless-tooler');
  await rpc(`${gw.url}/mcp`, agent.api_key, 'tools/call', { name: 'local__echo', arguments: { text: 'hi' } }, { 'x-agent-trace-id': 'otel-tools-3' });
  const span = await eventually(() => spans().find((s) => s.traceId === otelTraceId('acme', 'otel-tools-3')), 10_000, 'the execute_tool span');
  expect(attr(span, 'gen_ai.tool.name')).toBe('local__echo');
  expect(attr(span, 'mcp.session.id')).toBeUndefined();
  expect(attr(span, 'mcp.protocol.version')).toBe(REVISION);
});
