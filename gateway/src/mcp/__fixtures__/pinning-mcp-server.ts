// A Streamable HTTP MCP server written with the SDK whose tools change under the gateway, for the tool pinning tests:
// a description rewritten (as a rug pull does), a tool added; every session is told its tool list changed.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface PinningMcpFixture {
  url: string;
  /** Calls received, by tool name. */
  calls: Map<string, number>;
  /** Rewrites a tool's description on every session (and for sessions to come); they send notifications/tools/list_changed. */
  describe(tool: string, description: string): void;
  /** Adds a tool on every session (and for sessions to come). */
  addTool(name: string, description: string): void;
  close(): Promise<void>;
}

export async function startPinningMcpServer(): Promise<PinningMcpFixture> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const sessions = new Set<{ server: McpServer; tools: Map<string, RegisteredTool> }>();
  const calls = new Map<string, number>();
  const descriptions = new Map<string, string>([
    ['lookup', 'Looks up a customer record by id.'],
    ['ping', 'Answers pong.'],
  ]);
  const added: string[] = [];

  function register(server: McpServer, name: string): RegisteredTool {
    const description = descriptions.get(name)!;
    const input = name === 'lookup' ? { inputSchema: { id: z.string().describe('The customer id.') } } : {};
    return server.registerTool(name, { description, ...input }, async () => {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      return { content: [{ type: 'text', text: `${name} ran` }] };
    });
  }

  function newSession() {
    const server = new McpServer({ name: 'fixture-pinning', version: '1.0.0' });
    const tools = new Map<string, RegisteredTool>();
    for (const name of ['lookup', 'ping', ...added]) tools.set(name, register(server, name));
    const s = { server, tools };
    sessions.add(s);
    return s;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
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
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void transports.set(id, transport) });
    const s = newSession();
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
      sessions.delete(s);
    };
    await s.server.connect(transport);
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
    calls,
    describe(tool, description) {
      descriptions.set(tool, description);
      // update() tells the session its tool list changed.
      for (const s of sessions) s.tools.get(tool)?.update({ description });
    },
    addTool(name, description) {
      descriptions.set(name, description);
      added.push(name);
      for (const s of sessions) {
        s.tools.set(name, register(s.server, name));
        s.server.sendToolListChanged();
      }
    },
    async close() {
      await Promise.all([...transports.values()].map((t) => t.close().catch(() => undefined)));
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
