#!/usr/bin/env node
// A small MCP server over stdio, written with the SDK, for the /mcp tests: agentgw starts it on first use.
// Tools: echo, whoami (its process id, to see a restart), crash (exits mid-call), lookup_customer (PII in its result).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'fixture-stdio', version: '1.0.0' });

server.registerTool('echo', { description: 'Says the text back.', inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: 'text', text }],
}));

server.registerTool('whoami', { description: 'The process id of this server.' }, async () => ({
  content: [{ type: 'text', text: String(process.pid) }],
}));

server.registerTool('crash', { description: 'Exits without answering.' }, async () => {
  process.exit(3);
});

server.registerTool('lookup_customer', { description: 'A customer record.', inputSchema: { id: z.string() } }, async ({ id }) => ({
  content: [{ type: 'text', text: `Customer ${id}: Jane Doe, jane.doe@example.com, card 4111 1111 1111 1111` }],
}));

server.registerPrompt('greet', { description: 'A greeting.', argsSchema: { name: z.string() } }, ({ name }) => ({
  messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${name}.` } }],
}));

await server.connect(new StdioServerTransport());
