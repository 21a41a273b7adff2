// A Streamable HTTP MCP server (stateless, the SDK's) with one tool that reports its steps as progress, for the tests
// of agent CLIs through /mcp and /mcp/<server>.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** A build server: its one tool reports each step as progress (when the caller asks for it) and answers with a build id. */
export interface BuildServer {
  url: string;
  /** The progress token of each call (undefined: the caller asked for none), and the notifications sent for it. */
  calls: Array<{ token: string | number | undefined; sent: number }>;
  close(): Promise<void>;
}

export async function startBuildServer(): Promise<BuildServer> {
  const calls: BuildServer['calls'] = [];
  const http: Server = createServer(async (req, res) => {
    const server = new McpServer({ name: 'builds', version: '1.0.0' });
    server.registerTool('run_build', { description: 'Builds the project; reports each step as progress.', inputSchema: { target: z.string() } }, async ({ target }, extra) => {
      const call = { token: extra._meta?.progressToken, sent: 0 };
      calls.push(call);
      for (let step = 1; step <= 3; step++) {
        if (call.token === undefined) continue;
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: call.token, progress: step, total: 3, message: `step ${step} of 3` } });
        call.sent++;
        await new Promise((r) => setTimeout(r, 50));
      }
      return { content: [{ type: 'text', text: `build ${target} finished: id bld-7f3a after 3 steps` }] };
    });
    // Stateless: a server and transport per request.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    calls,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
