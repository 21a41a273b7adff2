// Web search on the chat path: web_search_options -> Anthropic's web search server tool, and its server_tool_use and
// web_search_tool_result blocks left out of the chat answer, plain and streamed.
// Fixtures: message-web-search.json (a message in the shape of Anthropic's web search answers) and
// message-stream-web-search.sse (the same turn streamed, as in data-plane/dialects/messages/__fixtures__/anthropic-stream-server-tool.sse).
import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../../contract/errors.js';
import type { ResponsesRequest } from '../../translate/responses-api.js';
import { responsesToChatRequest } from '../../translate/responses-to-chat-request.js';
import { adapterOnFakeUpstream, collectFrames, ctx, FakeUpstream, fixtureReader, jsonReply, parseFrames, sseEventsOf, streamReply } from '../__fixtures__/fake-upstream.js';
import { createProvider } from '../index.js';
import type { OpenAIChatRequest, ProviderAdapter } from '../spec.js';

const fixtures = fixtureReader(import.meta.url);

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Current weather of a city', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
};

const question: OpenAIChatRequest = {
  model: 'anthropic/claude-sonnet-4-5',
  messages: [{ role: 'user', content: 'What is the current Node.js LTS?' }],
  web_search_options: {},
};

/** The answer's text: the text blocks, a paragraph break where a search came between two of them. */
const ANSWER = "I'll search for the current Node.js LTS release.\n\nBased on the search results, the current Active LTS line is Node.js 24.";
const WEB_SEARCH = { type: 'web_search_20250305', name: 'web_search' };

describe('anthropic adapter: web search', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('anthropic', { type: 'anthropic', base_url: `${url}/v1`, api_key: 'sk-ant-api03-test' }),
    (u, a) => ((upstream = u), (adapter = a)),
  );

  it('sends web_search_options as the web search server tool, after the client tools, with the user location', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message-web-search.json')));
    await adapter.chat(ctx('claude-sonnet-4-5'), {
      ...question,
      tools: [weatherTool],
      tool_choice: 'auto',
      web_search_options: { search_context_size: 'high', user_location: { type: 'approximate', approximate: { city: 'Paris', country: 'FR', timezone: 'Europe/Paris' } } },
    });
    const body = upstream.last.json();
    expect(body.tools).toEqual([
      { name: 'get_weather', description: 'Current weather of a city', input_schema: weatherTool.function.parameters },
      { ...WEB_SEARCH, user_location: { type: 'approximate', city: 'Paris', country: 'FR', timezone: 'Europe/Paris' } },
    ]);
    expect(body.tool_choice).toEqual({ type: 'auto' });
    expect(body).not.toHaveProperty('web_search_options');
  });

  it('sends the bare tool for an empty web_search_options, and no tool without it', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message-web-search.json')));
    await adapter.chat(ctx('claude-sonnet-4-5'), question);
    expect(upstream.last.json().tools).toEqual([WEB_SEARCH]);
    expect(upstream.last.json()).not.toHaveProperty('tool_choice');
    // A location of anything but strings is read as no location (chat clients may send any object).
    await adapter.chat(ctx('claude-sonnet-4-5'), { ...question, web_search_options: { user_location: { type: 'approximate', approximate: { city: 5 } } } as never });
    expect(upstream.last.json().tools).toEqual([WEB_SEARCH]);
    const { web_search_options: _, ...plain } = question;
    await adapter.chat(ctx('claude-sonnet-4-5'), plain);
    expect(upstream.last.json()).not.toHaveProperty('tools');
  });

  it('maps a required tool: web search when it is the only tool, any tool otherwise; "none" stops it too', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message-web-search.json')));
    await adapter.chat(ctx('claude-sonnet-4-5'), { ...question, tool_choice: 'required' });
    expect(upstream.last.json().tool_choice).toEqual({ type: 'tool', name: 'web_search' });
    await adapter.chat(ctx('claude-sonnet-4-5'), { ...question, tools: [weatherTool], tool_choice: 'required', parallel_tool_calls: false });
    expect(upstream.last.json().tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    await adapter.chat(ctx('claude-sonnet-4-5'), { ...question, tools: [weatherTool], tool_choice: 'none' });
    expect(upstream.last.json().tool_choice).toEqual({ type: 'none' });
  });

  it('refuses a function named like the search tool before calling Anthropic', async () => {
    const clash = { ...weatherTool, function: { ...weatherTool.function, name: 'web_search' } };
    await expect(adapter.chat(ctx('claude-sonnet-4-5'), { ...question, tools: [clash] })).rejects.toMatchObject({ code: 'validation_failed', status: 400, param: 'tools' });
    await expect(adapter.chat(ctx('claude-sonnet-4-5'), { ...question, tools: [clash] })).rejects.toBeInstanceOf(AgentgwError);
    expect(upstream.requests).toHaveLength(0);
  });

  it('answers with the text only: server_tool_use and web_search_tool_result are not tool calls, citations are dropped; the search is billed', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message-web-search.json')));
    const result = await adapter.chat(ctx('claude-sonnet-4-5'), question);
    expect(result.body.choices).toEqual([{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop', logprobs: null }]);
    expect(result.usage).toEqual({ prompt_tokens: 10_461, completion_tokens: 142, cached_prompt_tokens: 0, cache_write_prompt_tokens: 0, cache_write_1h_prompt_tokens: 0, web_search_calls: 1, estimated: false });
  });

  it('answers a failed search (web_search_tool_result_error) with the text around it', async () => {
    const message = fixtures.json('message-web-search.json') as { content: Array<Record<string, unknown>> };
    message.content[2] = { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01WYG3ziw53XMcoyKL4XcZmE', content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' } };
    upstream.respond(jsonReply(200, message));
    const result = await adapter.chat(ctx('claude-sonnet-4-5'), question);
    expect(result.body.choices[0].message).toEqual({ role: 'assistant', content: ANSWER });
  });

  it('keeps client tool calls next to a search', async () => {
    const message = fixtures.json('message-web-search.json') as { content: Array<Record<string, unknown>>; stop_reason: string };
    message.content = [...message.content, { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { location: 'Paris' } }];
    message.stop_reason = 'tool_use';
    upstream.respond(jsonReply(200, message));
    const result = await adapter.chat(ctx('claude-sonnet-4-5'), { ...question, tools: [weatherTool] });
    expect(result.body.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { content: ANSWER, tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
    });
  });

  it('streams the text only: no tool_calls for the server tool, its input or its results; citations_delta skipped', async () => {
    upstream.respond(streamReply(sseEventsOf(fixtures.text('message-stream-web-search.sse'))));
    const stream = await adapter.chatStream(ctx('claude-sonnet-4-5', { includeUsage: true }), { ...question, stream: true });
    const chunks = parseFrames(await collectFrames(stream));
    expect(upstream.last.json().tools).toEqual([WEB_SEARCH]);
    expect(chunks.some((c) => c.choices[0]?.delta?.tool_calls)).toBe(false);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(ANSWER);
    expect(stream.finishReason()).toBe('stop');
    expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: 10_461, completion_tokens: 142, total_tokens: 10_603 });
    expect(stream.usage()).toMatchObject({ prompt_tokens: 10_461, completion_tokens: 142, web_search_calls: 1, estimated: false });
  });
});

describe('a Responses request with web_search, translated for Anthropic', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('anthropic', { type: 'anthropic', base_url: `${url}/v1`, api_key: 'sk-ant-api03-test' }),
    (u, a) => ((upstream = u), (adapter = a)),
  );

  it("runs on Anthropic's web search next to the client's tools, as Codex sends it", async () => {
    const codex = {
      model: 'gpt-5-codex',
      input: 'What is the current Node.js LTS?',
      tools: [
        { type: 'function', name: 'shell_command', parameters: { type: 'object', properties: { command: { type: 'string' } } } },
        { type: 'web_search', external_web_access: true, search_content_types: ['text', 'image'] },
      ],
      tool_choice: 'auto',
    } as unknown as ResponsesRequest;
    const { request, droppedTools } = responsesToChatRequest(codex, { model: 'claude-sonnet-4-5', maxTokensField: 'max_tokens', reasons: false, webSearch: true });
    expect(droppedTools).toEqual([]);
    upstream.respond(jsonReply(200, fixtures.json('message-web-search.json')));
    const result = await adapter.chat(ctx('claude-sonnet-4-5'), request);
    expect(upstream.last.json().tools.map((t: { name: string }) => t.name)).toEqual(['shell_command', 'web_search']);
    expect(result.body.choices[0].message.content).toBe(ANSWER);
  });
});
