// An upstream MCP server that serves what the MCP conformance suite's server scenarios call (its tool, resource and prompt
// names), over Streamable HTTP with sessions and an event store, written with the SDK. The suite runs against it directly
// and through agentgw's /mcp/<server>: what passes directly must pass through the gateway. Requests of the 2026-07-28
// revision (stateless) are answered by its other face, conformance-upstream-2026.ts, with the same tools, resources and
// prompts.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type EventStore, StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  type Tool,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { modernFace } from './conformance-upstream-2026.js';
import { DEFAULTS_FORM, ENUMS_FORM, PNG, SCHEMA_2020_12, WAV } from './conformance-content.js';



function memoryEventStore(): EventStore {
  const events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  let n = 0;
  return {
    async storeEvent(streamId, message) {
      const id = `${streamId}::${String(++n).padStart(10, '0')}`;
      events.set(id, { streamId, message });
      return id;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const streamId = lastEventId.split('::')[0] ?? '';
      for (const [id, e] of events) if (e.streamId === streamId && id > lastEventId) await send(id, e.message);
      return streamId;
    },
  };
}

/** The whole body of a request (the SDK's transports read it from `rawBody` when it is already read). */
async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

type Sleep = (ms: number) => Promise<void>;
const sleep: Sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function newServer(transports: Map<string, StreamableHTTPServerTransport>, received: string[]): McpServer {
  const server = new McpServer(
    { name: 'conformance-upstream', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, logging: {}, completions: {} } },
  );
  const log = (data: string) => void server.server.notification({ method: 'notifications/message', params: { level: 'info', logger: 'conformance-upstream', data } }).catch(() => undefined);
  const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

  server.registerTool('test_simple_text', { description: 'Tests simple text content response' }, async () => text('This is a simple text response for testing.'));
  server.registerTool('test_image_content', { description: 'Tests image content response' }, async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }));
  server.registerTool('test_audio_content', { description: 'Tests audio content response' }, async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }));
  server.registerTool('test_embedded_resource', { description: 'Tests embedded resource content response' }, async () => ({
    content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }],
  }));
  server.registerTool('test_multiple_content_types', { description: 'Tests response with multiple content types (text, image, resource)' }, async () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
    ],
  }));
  server.registerTool('test_tool_with_logging', { description: 'Tests tool that emits log messages during execution', inputSchema: {} }, async (_args, extra) => {
    for (const data of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
      await sleep(50);
    }
    return text('Tool with logging executed successfully');
  });
  server.registerTool('test_tool_with_progress', { description: 'Tests tool that reports progress notifications', inputSchema: {} }, async (_args, extra) => {
    const progressToken = extra._meta?.progressToken ?? 0;
    for (const progress of [0, 50, 100]) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` } });
      await sleep(50);
    }
    return text(String(progressToken));
  });
  server.registerTool('test_error_handling', { description: 'Tests error response handling' }, async () => {
    throw new Error('This tool intentionally returns an error for testing');
  });
  server.registerTool('test_reconnection', { description: 'Closes the SSE stream mid-call; the result arrives after the client reconnects.', inputSchema: {} }, async (_args, extra) => {
    const t = extra.sessionId ? transports.get(extra.sessionId) : undefined;
    if (t && extra.requestId !== undefined) t.closeSSEStream(extra.requestId);
    await sleep(100);
    return text('Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.');
  });
  // Beside the suite's tools: sampling asked on the call's own stream (extra.sendRequest), as a well-behaved server does.
  server.registerTool('sample_on_stream', { description: 'Asks the caller to sample, on the call stream.', inputSchema: { prompt: z.string() } }, async ({ prompt }, extra) => {
    try {
      const r = await extra.sendRequest(
        { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 10 } },
        CreateMessageResultSchema,
      );
      const got = r.content.type === 'text' ? r.content.text : r.content.type;
      received.push(got);
      return text(`sampled: ${got}`);
    } catch (e) {
      return text(`Sampling not supported or error: ${(e as Error).message}`);
    }
  });
  server.registerTool('test_sampling', { description: 'Tests server-initiated sampling (LLM completion request)', inputSchema: { prompt: z.string() } }, async ({ prompt }) => {
    try {
      const r = (await server.server.request(
        { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 } },
        z.object({}).passthrough(),
      )) as { content?: { text?: string } };
      received.push(r.content?.text ?? '');
      return text(`LLM response: ${r.content?.text ?? 'No response'}`);
    } catch (e) {
      return text(`Sampling not supported or error: ${(e as Error).message}`);
    }
  });
  const elicit = async (message: string, requestedSchema: Record<string, unknown>, prefix: string) => {
    try {
      const r = await server.server.request({ method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } }, ElicitResultSchema);
      return text(`${prefix}: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    } catch (e) {
      return text(`Elicitation not supported or error: ${(e as Error).message}`);
    }
  };
  server.registerTool('test_elicitation', { description: 'Tests server-initiated elicitation (user input request)', inputSchema: { message: z.string() } }, async ({ message }) =>
    elicit(message, { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] }, 'User response'),
  );
  server.registerTool('test_elicitation_sep1034_defaults', { description: 'Tests elicitation with default values per SEP-1034', inputSchema: {} }, async () =>
    elicit(
      'Please review and update the form fields with defaults',
      DEFAULTS_FORM,
      'Elicitation completed',
    ),
  );
  server.registerTool('test_elicitation_sep1330_enums', { description: 'Tests elicitation with enum schema improvements per SEP-1330', inputSchema: {} }, async () =>
    elicit(
      'Please select options from the enum fields',
      ENUMS_FORM,
      'Elicitation completed',
    ),
  );
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)',
      inputSchema: {
        name: z.string().optional(),
        address: z.object({ street: z.string().optional(), city: z.string().optional() }).optional(),
        contactMethod: z.enum(['phone', 'email']).optional(),
        phone: z.string().optional(),
        email: z.string().optional(),
      },
    },
    async (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  );

  server.registerResource('static-text', 'test://static-text', { title: 'Static Text Resource', description: 'A static text resource for testing', mimeType: 'text/plain' }, async () => ({
    contents: [{ uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
  }));
  server.registerResource('static-binary', 'test://static-binary', { title: 'Static Binary Resource', description: 'A static binary resource (image) for testing', mimeType: 'image/png' }, async () => ({
    contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG }],
  }));
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { title: 'Resource Template', description: 'A resource template with parameter substitution', mimeType: 'application/json' },
    async (uri, { id }) => ({ contents: [{ uri: uri.toString(), mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${String(id)}` }) }] }),
  );
  server.registerResource('watched-resource', 'test://watched-resource', { title: 'Watched Resource', description: 'A resource that auto-updates every 3 seconds', mimeType: 'text/plain' }, async () => ({
    contents: [{ uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content' }],
  }));
  server.server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    log(`Subscribed to resource: ${req.params.uri}`);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    log(`Unsubscribed from resource: ${req.params.uri}`);
    return {};
  });

  server.registerPrompt('test_simple_prompt', { title: 'Simple Test Prompt', description: 'A simple prompt without arguments' }, async () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));
  server.registerPrompt(
    'test_prompt_with_arguments',
    { title: 'Prompt With Arguments', description: 'A prompt with required arguments', argsSchema: { arg1: z.string().describe('First test argument'), arg2: z.string().describe('Second test argument') } },
    async ({ arg1, arg2 }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }] }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    { title: 'Prompt With Embedded Resource', description: 'A prompt that includes an embedded resource', argsSchema: { resourceUri: z.string().describe('URI of the resource to embed') } },
    async ({ resourceUri }) => ({
      messages: [
        { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );
  server.registerPrompt('test_prompt_with_image', { title: 'Prompt With Image', description: 'A prompt that includes image content' }, async () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));

  server.server.setRequestHandler(SetLevelRequestSchema, async (req) => {
    log(`Log level set to: ${req.params.level}`);
    return {};
  });
  server.server.setRequestHandler(CompleteRequestSchema, async () => ({ completion: { values: [], total: 0, hasMore: false } }));

  // tools/list as registered, but the 2020-12 tool's schema as written (the SDK would rewrite it from zod).
  const registered = (server as unknown as { _registeredTools: Record<string, { enabled: boolean; title?: string; description?: string; annotations?: Tool['annotations'] }> })._registeredTools;
  const listed = server.server['_requestHandlers'].get('tools/list');
  server.server.setRequestHandler(ListToolsRequestSchema, async (req, extra) => {
    const base = (await listed!(req, extra)) as { tools: Tool[] };
    return {
      tools: base.tools
        .filter((t) => registered[t.name]?.enabled !== false)
        .map((t) => (t.name === 'json_schema_2020_12_tool' ? { name: t.name, description: t.description, inputSchema: SCHEMA_2020_12 } : t)),
    };
  });
  return server;
}

export interface ConformanceUpstream {
  url: string;
  /** What the server received, in order: the text of every sampling answer, and over 2026-07-28 the name an elicitation gave and the region argument (with its header). */
  received: string[];
  /** Forgets every session, as a restarted server does: the next request in one is a 404. */
  expireSessions(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the upstream on a loopback port; its endpoint is `<url>` (path /mcp). */
export async function startConformanceUpstream(): Promise<ConformanceUpstream> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const received: string[] = [];
  const modern = modernFace(received);
  let port = 0;
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding protection as the reference server has it: a Host or Origin that is not this loopback server is refused.
    const host = req.headers.host ?? '';
    const origin = req.headers.origin;
    const local = (h: string) => h === `127.0.0.1:${port}` || h === `localhost:${port}`;
    if (!local(host) || (origin !== undefined && !/^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(origin))) {
      res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Forbidden host or origin' }, id: null }));
      return;
    }
    if (req.method === 'POST') {
      // A request of the 2026-07-28 revision goes to that face; the body read here is handed on to the sessions as it came.
      const raw = await readBody(req);
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      if (body !== undefined && modern.claims(req, body)) {
        await modern.serve(req, res, raw, body);
        return;
      }
      (req as IncomingMessage & { rawBody?: Buffer }).rawBody = raw;
    }
    const sid = req.headers['mcp-session-id'] as string | undefined;
    if (sid) {
      const t = transports.get(sid);
      if (!t) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      await t.handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Missing session id' }, id: null }));
      return;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: memoryEventStore(),
      retryInterval: 500,
      onsessioninitialized: (id) => void transports.set(id, transport),
    });
    const server = newServer(transports, received);
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }
  const http: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    async expireSessions() {
      await Promise.all([...transports.values()].map((t) => t.close()));
      transports.clear();
    },
    async close() {
      await Promise.all([...transports.values()].map((t) => t.close()));
      await modern.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
