#!/usr/bin/env node
// An MCP server over stdio, written with the SDK, for the multi-node /mcp tests: a tool that reports progress, one that
// asks the client to sample and one that asks it for input (on the call's own channel), and a resource that can be
// subscribed to, which the `touch` tool changes.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CreateMessageResultSchema, ElicitResultSchema, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const server = new McpServer({ name: 'fixture-stdio-relay', version: '1.0.0' }, { capabilities: { resources: { subscribe: true } } });
const subscribed = new Set();
const text = (t) => ({ content: [{ type: 'text', text: t }] });

// Each step takes a moment, as real work does: progress written in the same breath as the result is lost in the MCP
// SDK's client (it handles a notification a microtask later, after the result it read with it has ended the request).
server.registerTool('progress', { description: 'Reports three steps as progress.' }, async (extra) => {
  const token = extra._meta?.progressToken;
  for (let i = 1; i <= 3; i++) {
    if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: 3 } });
    await new Promise((r) => setTimeout(r, 20));
  }
  return text(`done in process ${process.pid}`);
});
server.registerTool('sample', { description: 'Asks the caller to sample.', inputSchema: { prompt: z.string() } }, async ({ prompt }, extra) => {
  const r = await extra.sendRequest({ method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 10 } }, CreateMessageResultSchema);
  return text(`sampled: ${r.content.type === 'text' ? r.content.text : r.content.type}`);
});
server.registerTool('elicit', { description: 'Asks the caller a question.', inputSchema: { message: z.string() } }, async ({ message }, extra) => {
  const r = await extra.sendRequest(
    { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema: { type: 'object', properties: { response: { type: 'string' } }, required: ['response'] } } },
    ElicitResultSchema,
  );
  return text(`answer: ${r.action} ${JSON.stringify(r.content ?? {})}`);
});
server.registerTool('touch', { description: 'Changes the watched resource.' }, async () => {
  if (subscribed.has('file:///watched.txt')) await server.server.sendResourceUpdated({ uri: 'file:///watched.txt' });
  return text(`touched (${subscribed.size} subscribed)`);
});
server.registerResource('watched', 'file:///watched.txt', { description: 'A file that changes.' }, async (uri) => ({ contents: [{ uri: uri.href, text: 'now' }] }));
server.server.setRequestHandler(SubscribeRequestSchema, async (req) => {
  subscribed.add(req.params.uri);
  return {};
});
server.server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
  subscribed.delete(req.params.uri);
  return {};
});

await server.connect(new StdioServerTransport());
