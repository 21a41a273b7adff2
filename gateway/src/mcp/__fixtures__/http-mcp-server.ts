// A Streamable HTTP MCP server written with the SDK, for the /mcp tests: sessions the test can expire, a tool list
// it can change, and tools with PII in their arguments or results.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SetLevelRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface HttpMcpFixture {
  url: string;
  /** Headers of every request received (to check configured secrets are sent). */
  headers: IncomingMessage['headers'][];
  /** Tool calls received, by tool name. */
  calls: Map<string, number>;
  /** Arguments of the last send_email call. */
  lastEmail: Record<string, unknown> | undefined;
  /** Forgets every session, as a server does when sessions expire or it restarts: their next request gets 404. */
  expireSessions(): Promise<void>;
  /** Adds a tool to every session's server and tells the sessions their tool list changed. */
  addTool(name: string): void;
  sessionCount(): number;
  /** Calls of `wait` whose caller cancelled them (notifications/cancelled reached the server). */
  cancelled: number;
  /** Resource URIs subscribed to (resources/subscribe), over every session. */
  subscriptions: Set<string>;
  /** Tells the sessions subscribed to the URI that it changed (notifications/resources/updated). */
  updateResource(uri: string): void;
  /** The log level the gateway set on the server's sessions (logging/setLevel), last one. */
  logLevel: string | undefined;
  close(): Promise<void>;
}

export async function startHttpMcpServer(): Promise<HttpMcpFixture> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers = new Set<McpServer>();
  const subscribers = new Map<McpServer, Set<string>>();
  const extraTools: string[] = [];
  const fixture = {
    calls: new Map<string, number>(),
    headers: [] as IncomingMessage['headers'][],
    lastEmail: undefined as Record<string, unknown> | undefined,
    cancelled: 0,
    subscriptions: new Set<string>(),
    logLevel: undefined as string | undefined,
  };
  const count = (tool: string) => fixture.calls.set(tool, (fixture.calls.get(tool) ?? 0) + 1);

  function addExtraTool(server: McpServer, name: string): void {
    server.registerTool(name, { description: `Added later: ${name}.` }, async () => {
      count(name);
      return { content: [{ type: 'text', text: `${name} ran` }] };
    });
  }

  function newServer(): McpServer {
    const server = new McpServer({ name: 'fixture-http', version: '1.0.0' }, { capabilities: { logging: {}, resources: { subscribe: true } } });
    const subscribed = new Set<string>();
    subscribers.set(server, subscribed);
    server.server.setRequestHandler(SubscribeRequestSchema, async (req) => {
      subscribed.add(req.params.uri);
      fixture.subscriptions.add(req.params.uri);
      return {};
    });
    server.server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
      subscribed.delete(req.params.uri);
      fixture.subscriptions.delete(req.params.uri);
      return {};
    });
    // A template with argument completion (not listed by resources/list: it lists no resources of its own).
    server.registerResource(
      'doc',
      new ResourceTemplate('file:///docs/{name}', { list: undefined, complete: { name: (value) => ['alpha', 'beta', 'alpine'].filter((n) => n.startsWith(value)) } }),
      { description: 'A document by name.' },
      async (uri) => ({ contents: [{ uri: uri.href, text: `doc ${uri.href}` }] }),
    );
    server.server.setRequestHandler(SetLevelRequestSchema, async (req) => {
      fixture.logLevel = req.params.level;
      return {};
    });
    server.registerTool('progress', { description: 'Reports progress three times, logs, then answers.', inputSchema: { steps: z.number().optional() } }, async ({ steps }, extra) => {
      count('progress');
      const token = extra._meta?.progressToken;
      const total = steps ?? 3;
      for (let i = 1; i <= total; i++) {
        if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total, message: `step ${i}` } });
      }
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', logger: 'fixture', data: `ran ${total} steps` } });
      return { content: [{ type: 'text', text: 'done' }] };
    });
    server.registerTool('wait', { description: 'Waits until cancelled (at most 10 s).' }, async (extra) => {
      count('wait');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 10_000);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          fixture.cancelled++;
          resolve();
        });
      });
      return { content: [{ type: 'text', text: 'waited' }] };
    });
    server.registerTool('linked', { description: 'Answers with a link to the readme and the readme embedded.' }, async () => {
      count('linked');
      return {
        content: [
          { type: 'resource_link', uri: 'file:///readme.md', name: 'readme', mimeType: 'text/markdown' },
          { type: 'resource', resource: { uri: 'file:///readme.md', mimeType: 'text/markdown', text: '# Readme' } },
        ],
      };
    });
    server.registerTool('search', { description: 'Searches.', inputSchema: { query: z.string() } }, async ({ query }) => {
      count('search');
      return { content: [{ type: 'text', text: `results for ${query}` }] };
    });
    server.registerTool('send_email', { description: 'Sends an email.', inputSchema: { to: z.string(), body: z.string() } }, async (args) => {
      count('send_email');
      fixture.lastEmail = args;
      return { content: [{ type: 'text', text: 'sent' }] };
    });
    server.registerTool('get_profile', { description: 'A user profile.' }, async () => {
      count('get_profile');
      return {
        content: [{ type: 'text', text: 'Name: Ann Lee. Email: ann.lee@example.org. Phone: +1 415 555 2671.' }],
        structuredContent: { email: 'ann.lee@example.org', name: 'Ann Lee' },
      };
    });
    server.registerTool('paid_lookup', { description: 'A lookup billed per call.' }, async () => {
      count('paid_lookup');
      await new Promise((r) => setTimeout(r, 5));
      return { content: [{ type: 'text', text: 'found' }] };
    });
    server.registerTool('slow', { description: 'Takes a second.' }, async () => {
      count('slow');
      await new Promise((r) => setTimeout(r, 1_000));
      return { content: [{ type: 'text', text: 'late' }] };
    });
    server.registerTool('delete_everything', { description: 'Dangerous.' }, async () => {
      count('delete_everything');
      return { content: [{ type: 'text', text: 'deleted' }] };
    });
    server.registerResource('readme', 'file:///readme.md', { description: 'The readme.', mimeType: 'text/markdown' }, async (uri) => ({
      contents: [{ uri: uri.href, text: '# Readme\nContact: owner@example.com' }],
    }));
    for (const name of extraTools) addExtraTool(server, name);
    servers.add(server);
    return server;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    fixture.headers.push(req.headers);
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
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void transports.set(id, transport),
    });
    const server = newServer();
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
      servers.delete(server);
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
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get headers() {
      return fixture.headers;
    },
    calls: fixture.calls,
    get lastEmail() {
      return fixture.lastEmail;
    },
    async expireSessions() {
      const all = [...transports.values()];
      transports.clear();
      await Promise.all(all.map((t) => t.close()));
    },
    addTool(name) {
      extraTools.push(name);
      for (const s of servers) {
        addExtraTool(s, name);
        s.sendToolListChanged();
      }
    },
    sessionCount: () => transports.size,
    get subscriptions() {
      return fixture.subscriptions;
    },
    updateResource(uri) {
      for (const [s, uris] of subscribers) if (uris.has(uri)) void s.server.sendResourceUpdated({ uri }).catch(() => undefined);
    },
    get cancelled() {
      return fixture.cancelled;
    },
    get logLevel() {
      return fixture.logLevel;
    },
    async close() {
      await Promise.all([...transports.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
