// The 2026-07-28 face of the conformance upstream (conformance-upstream.ts): the same tools, resources and prompts,
// served statelessly (no initialize; protocol version, client capabilities and log level in each request's `_meta`;
// server/discover; subscriptions/listen; cache hints on lists; input_required results with integrity-protected
// requestState in place of server-to-client requests), written with @modelcontextprotocol/server 2.4.0 (the SDK's v2,
// which serves that revision). Beside the 2025-11-25 tools it has the diagnostic tools the suite's 2026-07-28 scenarios
// call by name. The upstream routes a request here when the SDK classifies it as of the 2026-07-28 revision (a
// malformed claim too, which gets that revision's errors); everything else stays on its 2025-11-25 sessions.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  acceptedContent,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  classifyInboundRequest,
  createMcpHandler,
  createRequestStateCodec,
  fromJsonSchema,
  type GetPromptResult,
  type InputRequests,
  type InputRequiredResult,
  inputRequired,
  McpServer,
  type McpHttpHandler,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { DEFAULTS_FORM, ENUMS_FORM, PNG, SCHEMA_2020_12, WAV } from './conformance-content.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
const form = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object' as const, properties, required }) as never;


type Codec = ReturnType<typeof createRequestStateCodec<Record<string, unknown>>>;

function newServer(codec: Codec, handler: () => McpHttpHandler, received: string[]): McpServer {
  const server = new McpServer(
    { name: 'conformance-upstream', version: '1.0.0' },
    {
      capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, logging: {}, completions: {} },
      // A retried request's requestState is checked (HMAC, TTL) before any handler runs: a tampered one is a -32602.
      requestState: { verify: codec.verify },
    },
  );

  // The tools of the 2025-11-25 face.
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
  server.registerTool('test_tool_with_logging', { description: 'Tests tool that emits log messages during execution', inputSchema: z.object({}) }, async (_args, ctx) => {
    for (const data of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
      await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data } });
      await sleep(50);
    }
    return text('Tool with logging executed successfully');
  });
  server.registerTool('test_tool_with_progress', { description: 'Tests tool that reports progress notifications', inputSchema: z.object({}) }, async (_args, ctx) => {
    // No progress without a token of the caller's.
    const progressToken = ctx.mcpReq._meta?.progressToken;
    if (progressToken !== undefined) {
      for (const progress of [0, 50, 100]) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` } });
        if (progress < 100) await sleep(50);
      }
    }
    return text(String(progressToken ?? 'no-progress-token'));
  });
  server.registerTool('test_error_handling', { description: 'Tests error response handling' }, async () => {
    throw new Error('This tool intentionally returns an error for testing');
  });
  // A stateless exchange has no stream to close and resume: the call simply completes.
  server.registerTool('test_reconnection', { description: 'Closes the SSE stream mid-call; the result arrives after the client reconnects.', inputSchema: z.object({}) }, async () => {
    await sleep(100);
    return text('Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.');
  });
  const sample = async (prompt: string, maxTokens: number, ctx: ServerContext): Promise<string> => {
    const r = (await ctx.mcpReq.send({ method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens } })) as {
      content?: { type?: string; text?: string };
    };
    const got = r.content?.type === 'text' || r.content?.text !== undefined ? (r.content?.text ?? '') : (r.content?.type ?? '');
    received.push(got);
    return got;
  };
  server.registerTool('sample_on_stream', { description: 'Asks the caller to sample, on the call stream.', inputSchema: z.object({ prompt: z.string() }) }, async ({ prompt }, ctx) => {
    try {
      return text(`sampled: ${await sample(prompt, 10, ctx)}`);
    } catch (e) {
      return text(`Sampling not supported or error: ${(e as Error).message}`);
    }
  });
  server.registerTool('test_sampling', { description: 'Tests server-initiated sampling (LLM completion request)', inputSchema: z.object({ prompt: z.string() }) }, async ({ prompt }, ctx) => {
    try {
      return text(`LLM response: ${(await sample(prompt, 100, ctx)) || 'No response'}`);
    } catch (e) {
      return text(`Sampling not supported or error: ${(e as Error).message}`);
    }
  });
  const elicit = async (ctx: ServerContext, message: string, requestedSchema: Record<string, unknown>, prefix: string) => {
    try {
      const r = (await ctx.mcpReq.send({ method: 'elicitation/create', params: { mode: 'form', message, requestedSchema: requestedSchema as never } })) as { action?: string; content?: unknown };
      return text(`${prefix}: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    } catch (e) {
      return text(`Elicitation not supported or error: ${(e as Error).message}`);
    }
  };
  server.registerTool('test_elicitation', { description: 'Tests server-initiated elicitation (user input request)', inputSchema: z.object({ message: z.string() }) }, async ({ message }, ctx) =>
    elicit(ctx, message, { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] }, 'User response'),
  );
  server.registerTool('test_elicitation_sep1034_defaults', { description: 'Tests elicitation with default values per SEP-1034', inputSchema: z.object({}) }, async (_args, ctx) =>
    elicit(
      ctx,
      'Please review and update the form fields with defaults',
      DEFAULTS_FORM,
      'Elicitation completed',
    ),
  );
  server.registerTool('test_elicitation_sep1330_enums', { description: 'Tests elicitation with enum schema improvements per SEP-1330', inputSchema: z.object({}) }, async (_args, ctx) =>
    elicit(
      ctx,
      'Please select options from the enum fields',
      ENUMS_FORM,
      'Elicitation completed',
    ),
  );
  server.registerTool(
    'json_schema_2020_12_tool',
    { description: 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)', inputSchema: fromJsonSchema<Record<string, unknown>>(SCHEMA_2020_12) },
    async (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  );

  // The 2026-07-28 scenarios' own tools (called by name): SEP-2243 parameter headers, SEP-2575 diagnostics.
  server.registerTool(
    'test_x_mcp_header',
    {
      description: 'Tests SEP-2243 Mcp-Param-* server-side validation',
      inputSchema: fromJsonSchema<{ region?: string; level?: number }>({
        type: 'object',
        properties: { region: { type: 'string', description: 'mirrored into Mcp-Param-Region', 'x-mcp-header': 'Region' }, level: { type: 'integer', description: 'non-mirrored argument' } },
      } as Parameters<typeof fromJsonSchema>[0]),
    },
    async (args, ctx) => {
      received.push(`region: ${args.region ?? '<none>'}; Mcp-Param-Region: ${ctx.http?.req?.headers.get('mcp-param-region') ?? '<none>'}`);
      return text(`region=${args.region ?? '<none>'}`);
    },
  );
  server.registerTool('test_missing_capability', { description: 'Requires the sampling client capability (an input request for a completion)', inputSchema: z.object({}) }, async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
    if (ctx.mcpReq.inputResponses?.['llm_answer'] === undefined) {
      return inputRequired({ inputRequests: { llm_answer: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Reply with the single word: pong' } }], maxTokens: 16 }) } });
    }
    return text('sampling round-trip complete');
  });
  server.registerTool('test_streaming_elicitation', { description: 'Answers with result frames only, no request of its own', inputSchema: z.object({}) }, async () =>
    text('stream observed: result frames only, no top-level requests'),
  );
  server.registerTool('test_logging_tool', { description: 'Logs through the request-scoped channel, which the request\'s _meta.logLevel gates', inputSchema: z.object({}) }, async (_args, ctx) => {
    await ctx.mcpReq.log('info', 'test_logging_tool ran (delivered only when the request set _meta.logLevel)');
    return text('logged through the request-scoped, logLevel-gated channel');
  });
  server.registerTool('test_trigger_tool_change', { description: 'Publishes tools/list_changed to the open subscriptions/listen streams', inputSchema: z.object({}) }, async () => {
    handler().notify.toolsChanged();
    return text('tools_list_changed published');
  });
  server.registerTool('test_trigger_prompt_change', { description: 'Publishes prompts/list_changed to the open subscriptions/listen streams', inputSchema: z.object({}) }, async () => {
    handler().notify.promptsChanged();
    return text('prompts_list_changed published');
  });

  // Multi-round-trip tools (SEP-2322): an input_required result until the retried request carries the answers.
  const askName = () => inputRequired.elicit({ message: 'What is your name?', requestedSchema: form({ name: { type: 'string' } }, ['name']) });
  const askConfirm = () => inputRequired.elicit({ message: 'Please confirm', requestedSchema: form({ ok: { type: 'boolean' } }, ['ok']) });
  const mint = (payload: Record<string, unknown>) => codec.mint({ ...payload, nonce: randomUUID() });
  server.registerTool('test_input_required_result_elicitation', { description: 'Asks for the caller\'s name in-band (elicitation)', inputSchema: z.object({}) }, async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const name = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, 'user_name')?.name;
    if (typeof name !== 'string') return inputRequired({ inputRequests: { user_name: askName() } });
    received.push(`name: ${name}`);
    return text(`Hello, ${name}!`);
  });
  server.registerTool('test_input_required_result_sampling', { description: 'Asks for a completion in-band (sampling)', inputSchema: z.object({}) }, async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const r = ctx.mcpReq.inputResponses?.['capital_question'] as { content?: { text?: string } } | undefined;
    if (r === undefined) {
      return inputRequired({ inputRequests: { capital_question: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }], maxTokens: 100 }) } });
    }
    return text(`Sampling response: ${typeof r.content?.text === 'string' ? r.content.text : JSON.stringify(r)}`);
  });
  server.registerTool('test_input_required_result_list_roots', { description: 'Asks for the client\'s roots in-band', inputSchema: z.object({}) }, async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const r = ctx.mcpReq.inputResponses?.['client_roots'] as { roots?: Array<{ uri?: string }> } | undefined;
    if (!Array.isArray(r?.roots)) return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    return text(`Client exposed ${r.roots.length} root(s): ${r.roots.map((x) => x.uri).join(', ')}`);
  });
  server.registerTool('test_input_required_result_request_state', { description: 'Round-trips integrity-protected requestState beside an elicitation', inputSchema: z.object({}) }, async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
    if (acceptedContent<{ ok: boolean }>(ctx.mcpReq.inputResponses, 'confirm') === undefined) {
      return inputRequired({ inputRequests: { confirm: askConfirm() }, requestState: await mint({ tool: 'request_state' }) });
    }
    if (ctx.mcpReq.requestState<Record<string, unknown>>() === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid requestState: missing or failed integrity verification');
    return text('state-ok: requestState verified and confirmation received');
  });
  server.registerTool('test_input_required_result_multiple_inputs', { description: 'Asks for elicitation, sampling and roots in one round', inputSchema: z.object({}) }, async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const responses = ctx.mcpReq.inputResponses;
    const name = acceptedContent<{ name: string }>(responses, 'user_name')?.name;
    const greeting = (responses?.['greeting'] as { content?: { text?: string } } | undefined)?.content?.text;
    const roots = (responses?.['client_roots'] as { roots?: unknown[] } | undefined)?.roots;
    if (typeof name !== 'string' || typeof greeting !== 'string' || !Array.isArray(roots)) {
      return inputRequired({
        inputRequests: {
          user_name: askName(),
          greeting: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 }),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await mint({ tool: 'multiple_inputs' }),
      });
    }
    return text(`${greeting} ${name} — ${roots.length} root(s) visible`);
  });
  server.registerTool('test_input_required_result_multi_round', { description: 'Two elicitation rounds, the round kept in requestState', inputSchema: z.object({}) }, async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const state = ctx.mcpReq.requestState<Record<string, unknown>>();
    const round = state?.tool === 'multi_round' && typeof state.round === 'number' ? state.round : 0;
    if (round === 0) {
      return inputRequired({
        inputRequests: { step1: inputRequired.elicit({ message: 'Step 1: What is your name?', requestedSchema: form({ name: { type: 'string' } }, ['name']) }) },
        requestState: await mint({ tool: 'multi_round', round: 1 }),
      });
    }
    if (round === 1) {
      const name = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, 'step1')?.name ?? 'unknown';
      return inputRequired({
        inputRequests: { step2: inputRequired.elicit({ message: 'Step 2: What is your favorite color?', requestedSchema: form({ color: { type: 'string' } }, ['color']) }) },
        requestState: await mint({ tool: 'multi_round', round: 2, name }),
      });
    }
    const color = acceptedContent<{ color: string }>(ctx.mcpReq.inputResponses, 'step2')?.color ?? 'unknown';
    return text(`Multi-round complete: ${String(state?.name ?? 'unknown')} likes ${color}`);
  });
  server.registerTool('test_input_required_result_tampered_state', { description: 'Refuses a retry whose requestState fails verification', inputSchema: z.object({}) }, async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
    if (ctx.mcpReq.requestState() !== undefined && acceptedContent(ctx.mcpReq.inputResponses, 'confirm') !== undefined) return text('integrity-ok: requestState verified');
    return inputRequired({ inputRequests: { confirm: askConfirm() }, requestState: await mint({ tool: 'tampered_state' }) });
  });
  server.registerTool('test_input_required_result_capabilities', { description: 'Asks only for the input kinds the request\'s client capabilities cover', inputSchema: z.object({}) }, async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
    if (ctx.mcpReq.inputResponses !== undefined) return text('Capability-aware input requests fulfilled');
    const declared = (ctx.mcpReq.envelope as Record<string, { elicitation?: unknown; sampling?: unknown; roots?: unknown } | undefined> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
    const inputRequests: InputRequests = {};
    if (declared?.elicitation !== undefined) inputRequests.user_name = askName();
    if (declared?.sampling !== undefined) inputRequests.greeting = inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Generate a short greeting' } }], maxTokens: 50 });
    if (declared?.roots !== undefined) inputRequests.client_roots = inputRequired.listRoots();
    if (Object.keys(inputRequests).length === 0) return text('No declared client capability supports an in-band input request');
    return inputRequired({ inputRequests });
  });

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
  server.server.setRequestHandler('resources/subscribe', async () => ({}));
  server.server.setRequestHandler('resources/unsubscribe', async () => ({}));

  server.registerPrompt('test_simple_prompt', { title: 'Simple Test Prompt', description: 'A simple prompt without arguments' }, async (): Promise<GetPromptResult> => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));
  server.registerPrompt(
    'test_prompt_with_arguments',
    { title: 'Prompt With Arguments', description: 'A prompt with required arguments', argsSchema: z.object({ arg1: z.string().describe('First test argument'), arg2: z.string().describe('Second test argument') }) },
    async ({ arg1, arg2 }): Promise<GetPromptResult> => ({ messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }] }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    { title: 'Prompt With Embedded Resource', description: 'A prompt that includes an embedded resource', argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }) },
    async ({ resourceUri }): Promise<GetPromptResult> => ({
      messages: [
        { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );
  server.registerPrompt('test_prompt_with_image', { title: 'Prompt With Image', description: 'A prompt that includes image content' }, async (): Promise<GetPromptResult> => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));
  // prompts/get may answer input_required too: the context is asked for in-band before the prompt is rendered.
  server.registerPrompt('test_input_required_result_prompt', { title: 'Input-required Prompt', description: 'A prompt that asks for its context before rendering' }, (async (ctx: ServerContext): Promise<GetPromptResult | InputRequiredResult> => {
    const context = acceptedContent<{ context: string }>(ctx.mcpReq.inputResponses, 'user_context')?.context;
    if (typeof context !== 'string') {
      return inputRequired({ inputRequests: { user_context: inputRequired.elicit({ message: 'What context should the prompt use?', requestedSchema: form({ context: { type: 'string' } }, ['context']) }) } });
    }
    return { messages: [{ role: 'user', content: { type: 'text', text: `Use the following context: ${context}` } }] };
  }) as never);

  server.server.setRequestHandler('logging/setLevel', async () => ({}));
  server.server.setRequestHandler('completion/complete', async () => ({ completion: { values: [], total: 0, hasMore: false } }));
  return server;
}

export interface ModernFace {
  /** Whether a POST with this body and these headers is of the 2026-07-28 revision (or a malformed claim to it). */
  claims(req: IncomingMessage, body: unknown): boolean;
  /** Answers one 2026-07-28 request. */
  serve(req: IncomingMessage, res: ServerResponse, raw: Buffer, body: unknown): Promise<void>;
  close(): Promise<void>;
}

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** The 2026-07-28 face; `received` gets the text of every sampling answer, as the 2025-11-25 face's does, and what the elicitation and header tools were given. */
export function modernFace(received: string[]): ModernFace {
  const codec = createRequestStateCodec<Record<string, unknown>>({ key: crypto.getRandomValues(new Uint8Array(32)) });
  // Modern only: 2025-11-25 traffic never reaches this handler (the upstream keeps its sessions for it).
  const handler: McpHttpHandler = createMcpHandler(() => newServer(codec, () => handler, received), { legacy: 'reject' });
  return {
    claims(req, body) {
      const inbound = classifyInboundRequest({
        httpMethod: req.method ?? 'POST',
        protocolVersionHeader: header(req.headers['mcp-protocol-version']),
        mcpMethodHeader: header(req.headers['mcp-method']),
        body,
      });
      return inbound.kind !== 'legacy';
    },
    async serve(req, res, raw, body) {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (v === undefined) continue;
        for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
      }
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, { method: req.method, headers, body: new Uint8Array(raw), signal: abort.signal });
      const response = await handler.fetch(request, { parsedBody: body });
      const out: Record<string, string[]> = {};
      response.headers.forEach((v, k) => (out[k] ??= []).push(v));
      res.writeHead(response.status, out);
      if (!response.body) {
        res.end();
        return;
      }
      const reader = response.body.getReader();
      res.on('close', () => void reader.cancel().catch(() => undefined));
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          res.write(value);
        }
      } catch {
        // the client went away mid-stream
      }
      res.end();
    },
    close: () => handler.close(),
  };
}
