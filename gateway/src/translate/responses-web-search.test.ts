// Responses web_search tools -> chat web_search_options, for targets that search the web themselves (the webSearch option).
import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../contract/errors.js';
import type { ResponsesRequest } from './responses-api.js';
import { type ResponsesToChatOptions, responsesToChatRequest } from './responses-to-chat-request.js';
import { isWebSearchTool } from './responses-tools.js';

const OPTS: ResponsesToChatOptions = { model: 'claude-x', maxTokensField: 'max_tokens', reasons: false };

function convert(extra: Record<string, unknown>, opts: Partial<ResponsesToChatOptions> = { webSearch: true }) {
  return responsesToChatRequest({ model: 'gpt-5', input: 'Hi', ...extra } as ResponsesRequest, { ...OPTS, ...opts });
}

function expect400(extra: Record<string, unknown>, param: string, message: RegExp | undefined, opts: Partial<ResponsesToChatOptions> = { webSearch: true }): void {
  let error: unknown;
  try {
    convert(extra, opts);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(AgentgwError);
  const e = error as AgentgwError;
  expect(e.status).toBe(400);
  expect(e.param).toBe(param);
  if (message) expect(e.message).toMatch(message);
}

const fn = (name: string) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } });

describe('responsesToChatRequest: web search on a target that searches (webSearch: true)', () => {
  it('knows web_search, web_search_preview and their dated versions', () => {
    for (const type of ['web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11']) expect(isWebSearchTool(type)).toBe(true);
    for (const type of ['web_search_call', 'file_search', 'web_searching', 'web_search_2025']) expect(isWebSearchTool(type)).toBe(false);
    for (const type of ['web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11']) {
      const { request, droppedTools } = convert({ tools: [{ type }] });
      expect(request.web_search_options).toEqual({});
      expect(droppedTools).toEqual([]);
    }
  });

  it("turns Codex's web_search into web_search_options next to the client tools; its extra fields are hints", () => {
    const { request, droppedTools } = convert({
      tools: [fn('shell'), { type: 'web_search', external_web_access: true, search_content_types: ['text', 'image'] }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    expect(request.web_search_options).toEqual({});
    expect(request.tools!.map((t) => t.function.name)).toEqual(['shell']);
    expect(request).toMatchObject({ tool_choice: 'auto', parallel_tool_calls: false });
    expect(droppedTools).toEqual([]);
  });

  it('carries search_context_size and user_location (flat on Responses, nested on chat); filters are hints', () => {
    const { request } = convert({
      tools: [
        {
          type: 'web_search',
          search_context_size: 'high',
          user_location: { type: 'approximate', city: 'Paris', country: 'FR', region: null, timezone: 'Europe/Paris' },
          filters: { allowed_domains: ['nodejs.org'] },
        },
        { type: 'web_search_preview', search_context_size: 'low' },
      ],
    });
    // The first web search tool says how to search.
    expect(request.web_search_options).toEqual({
      search_context_size: 'high',
      user_location: { type: 'approximate', approximate: { city: 'Paris', country: 'FR', timezone: 'Europe/Paris' } },
    });
    expect(convert({ tools: [{ type: 'web_search', user_location: { type: 'approximate' } }] }).request.web_search_options).toEqual({});
  });

  it('still leaves out and names the built-in tools the target cannot run', () => {
    const { request, droppedTools } = convert({ tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }, { type: 'web_search' }, { type: 'code_interpreter', container: { type: 'auto' } }] });
    expect(droppedTools).toEqual(['file_search', 'code_interpreter']);
    expect(request.web_search_options).toEqual({});
    expect(request.tools).toBeUndefined();
    expect(request.tool_choice).toBeUndefined();
  });

  it('requires the search for a tool_choice that requires it, sending no client tool', () => {
    for (const type of ['web_search', 'web_search_preview']) {
      const { request, droppedTools } = convert({ tools: [fn('a'), { type: 'web_search' }], tool_choice: { type } });
      expect(request).toMatchObject({ tool_choice: 'required', web_search_options: {} });
      expect(request.tools).toBeUndefined();
      expect(droppedTools).toEqual([]);
    }
    const required = convert({ tools: [{ type: 'web_search' }], tool_choice: 'required' }).request;
    expect(required).toMatchObject({ tool_choice: 'required', web_search_options: {} });
    const allowedOnly = convert({ tools: [fn('a'), { type: 'web_search' }], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search' }] } }).request;
    expect(allowedOnly).toMatchObject({ tool_choice: 'required', web_search_options: {} });
    expect(allowedOnly.tools).toBeUndefined();
  });

  it('lets allowed_tools and "none" leave the search out, without naming it as dropped', () => {
    const both = convert({ tools: [fn('a'), fn('b'), { type: 'web_search' }], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'a' }, { type: 'web_search' }] } });
    expect(both.request).toMatchObject({ tool_choice: 'required', web_search_options: {} });
    expect(both.request.tools!.map((t) => t.function.name)).toEqual(['a']);
    const notAllowed = convert({ tools: [fn('a'), { type: 'web_search' }], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'a' }] } });
    expect(notAllowed.request.web_search_options).toBeUndefined();
    expect(notAllowed.droppedTools).toEqual([]);
    const none = convert({ tools: [fn('a'), { type: 'web_search' }], tool_choice: 'none' });
    expect(none.request).toMatchObject({ tool_choice: 'none' });
    expect(none.request.web_search_options).toBeUndefined();
    expect(none.droppedTools).toEqual([]);
  });

  it('refuses a tool_choice that requires web search when tools has none, and bad web search fields', () => {
    expect400({ tools: [fn('a')], tool_choice: { type: 'web_search' } }, 'tool_choice', /no web search tool/);
    expect400({ tools: [{ type: 'web_search', search_context_size: 'huge' }] }, 'tools.0.search_context_size', /"low", "medium" or "high"/);
    expect400({ tools: [{ type: 'web_search', user_location: 'Paris' }] }, 'tools.0.user_location', undefined);
    expect400({ tools: [{ type: 'web_search', user_location: { type: 'exact' } }] }, 'tools.0.user_location', undefined);
    expect400({ tools: [fn('a'), { type: 'web_search', user_location: { city: 5 } }] }, 'tools.1.user_location.city', undefined);
  });
});

describe('responsesToChatRequest: web search on a target without one (webSearch false or absent)', () => {
  it('leaves web search out and names it, by its own type, in order', () => {
    for (const opts of [{}, { webSearch: false }]) {
      const { request, droppedTools } = convert({ tools: [fn('a'), { type: 'web_search_preview', search_context_size: 'low' }, { type: 'file_search', vector_store_ids: [] }, { type: 'web_search' }] }, opts);
      expect(droppedTools).toEqual(['web_search_preview', 'file_search', 'web_search']);
      expect(request.web_search_options).toBeUndefined();
      expect(request.tools!.map((t) => t.function.name)).toEqual(['a']);
    }
  });

  it('refuses a tool_choice that requires it, naming it', () => {
    expect400({ tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } }, 'tool_choice', /"web_search", which the target provider cannot run/, { webSearch: false });
    expect400({ tools: [{ type: 'web_search' }], tool_choice: 'required' }, 'tool_choice', /"web_search"/, { webSearch: false });
    expect400({ tools: [fn('a'), { type: 'web_search' }], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search' }] } }, 'tool_choice', /"web_search"/, { webSearch: false });
  });
});

describe("responsesToChatRequest: web search only without client tools (webSearch: 'without-client-tools')", () => {
  const opts = { webSearch: 'without-client-tools' as const };

  it('searches when the call sends no client tool', () => {
    const { request, droppedTools } = convert({ tools: [{ type: 'web_search' }, { type: 'image_generation' }] }, opts);
    expect(request.web_search_options).toEqual({});
    expect(droppedTools).toEqual(['image_generation']);
  });

  it('leaves web search out and names it when client tools are sent', () => {
    const { request, droppedTools } = convert({ tools: [fn('shell'), { type: 'web_search', external_web_access: false }], tool_choice: 'auto' }, opts);
    expect(request.web_search_options).toBeUndefined();
    expect(request.tools!.map((t) => t.function.name)).toEqual(['shell']);
    expect(droppedTools).toEqual(['web_search']);
    const required = convert({ tools: [fn('a'), { type: 'web_search' }], tool_choice: 'required' }, opts);
    expect(required.request).toMatchObject({ tool_choice: 'required' });
    expect(required.droppedTools).toEqual(['web_search']);
  });

  it('asks for the search alone when tool_choice requires it', () => {
    const { request, droppedTools } = convert({ tools: [fn('a'), { type: 'web_search' }], tool_choice: { type: 'web_search' } }, opts);
    expect(request).toMatchObject({ tool_choice: 'required', web_search_options: {} });
    expect(request.tools).toBeUndefined();
    expect(droppedTools).toEqual([]);
  });
});
