import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../contract/errors.js';
import type { OpenAIChatCompletion, OpenAIFinishReason, OpenAIToolCall } from '../providers/openai-format.js';
import type { Usage } from '../providers/spec.js';
import { type ChatToResponsesOptions, chatCompletionToResponse } from './chat-to-responses-response.js';
import type { ResponsesEcho } from './responses-api.js';
import { responsesErrorCode } from './responses-response-object.js';

const USAGE: Usage = { prompt_tokens: 120, completion_tokens: 30, cached_prompt_tokens: 100, reasoning_tokens: 12, estimated: false };

function completion(message: Partial<OpenAIChatCompletion['choices'][number]['message']> & Record<string, unknown>, finish: OpenAIFinishReason | null = 'stop'): OpenAIChatCompletion {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'claude-sonnet-4',
    choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finish }],
  };
}

const call = (id: string, name: string, args: string): OpenAIToolCall => ({ id, type: 'function', function: { name, arguments: args } });

function opts(request: ResponsesEcho = {}): ChatToResponsesOptions {
  return { id: 'resp_abc', model: 'gpt-5', createdAt: 1700000000, completedAt: 1700000005, usage: USAGE, request };
}

describe('chatCompletionToResponse', () => {
  it('makes a message item and function_call items, with usage and the request repeated', () => {
    const tools = [{ type: 'function' as const, name: 'read', parameters: { type: 'object' }, strict: false }];
    const r = chatCompletionToResponse(completion({ content: 'Reading.', tool_calls: [call('call_1', 'read', '{"p":"a"}')] }, 'tool_calls'), opts({ instructions: 'Be brief.', tools, store: false, metadata: { k: 'v' } }));
    expect(r).toEqual({
      id: 'resp_abc',
      object: 'response',
      created_at: 1700000000,
      status: 'completed',
      completed_at: 1700000005,
      error: null,
      incomplete_details: null,
      instructions: 'Be brief.',
      max_output_tokens: null,
      model: 'gpt-5',
      output: [
        { type: 'message', id: 'msg_abc_0', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Reading.', annotations: [] }] },
        { type: 'function_call', id: 'fc_abc_1', call_id: 'call_1', name: 'read', arguments: '{"p":"a"}', status: 'completed' },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: false,
      // The defaults in effect, as OpenAI reports them (and the Open Responses schema requires).
      temperature: 1,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [{ ...tools[0], description: null }],
      top_p: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      top_logprobs: 0,
      max_tool_calls: null,
      truncation: 'disabled',
      usage: { input_tokens: 120, input_tokens_details: { cached_tokens: 100, cache_write_tokens: 0 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 150 },
      user: null,
      metadata: { k: 'v' },
      background: false,
      service_tier: 'default',
      prompt_cache_key: null,
      safety_identifier: null,
    });
    // output_text is the SDKs' convenience, not part of the wire.
    expect('output_text' in r).toBe(false);
  });

  it('says incomplete when the limit cut the answer short', () => {
    const r = chatCompletionToResponse(completion({ content: 'Once upon' }, 'length'), opts({ max_output_tokens: 3 }));
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.completed_at).toBeNull();
    expect(r.max_output_tokens).toBe(3);
    expect(r.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    const filtered = chatCompletionToResponse(completion({ content: '' }, 'content_filter'), opts());
    expect(filtered.incomplete_details).toEqual({ reason: 'content_filter' });
    expect(filtered.output).toEqual([]);
  });

  it('keeps a refusal as a refusal part', () => {
    const r = chatCompletionToResponse(completion({ refusal: 'I cannot help with that.' }), opts());
    expect(r.output).toEqual([{ type: 'message', id: 'msg_abc_0', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] }]);
  });

  it('turns calls of custom and namespaced tools back into their items', () => {
    const request: ResponsesEcho = {
      tools: [
        { type: 'custom', name: 'apply_patch' },
        { type: 'namespace', name: 'gh', description: 'GitHub', tools: [{ type: 'function', name: 'search' }, { type: 'custom', name: 'note' }] },
      ],
    };
    const r = chatCompletionToResponse(completion({
      tool_calls: [
        call('c1', 'apply_patch', JSON.stringify({ input: '*** Begin Patch' })),
        call('c2', 'gh__search', '{"q":"x"}'),
        call('c3', 'gh__note', 'raw text'),
        call('c4', 'unknown_tool', '{}'),
      ],
    }, 'tool_calls'), opts(request));
    expect(r.output).toEqual([
      { type: 'custom_tool_call', id: 'ctc_abc_0', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch' },
      { type: 'function_call', id: 'fc_abc_1', call_id: 'c2', name: 'search', namespace: 'gh', arguments: '{"q":"x"}', status: 'completed' },
      { type: 'custom_tool_call', id: 'ctc_abc_2', call_id: 'c3', name: 'note', namespace: 'gh', input: 'raw text' },
      { type: 'function_call', id: 'fc_abc_3', call_id: 'c4', name: 'unknown_tool', arguments: '{}', status: 'completed' },
    ]);
  });

  it('gives a call without an id one the client can answer', () => {
    const r = chatCompletionToResponse(completion({ tool_calls: [call('', 'read', '{}')] }, 'tool_calls'), opts());
    expect(r.output[0]).toMatchObject({ call_id: 'call_abc_0' });
  });

  it('shows reasoning text of OpenAI-compatible servers as a reasoning summary', () => {
    const r = chatCompletionToResponse(completion({ content: '4', reasoning_content: '2+2 is 4.' }), opts());
    expect(r.output).toEqual([
      { type: 'reasoning', id: 'rs_abc_0', summary: [{ type: 'summary_text', text: '2+2 is 4.' }] },
      { type: 'message', id: 'msg_abc_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: '4', annotations: [] }] },
    ]);
  });

  it('repeats the request settings', () => {
    const r = chatCompletionToResponse(completion({ content: 'x' }), opts({
      temperature: 0.5, top_p: 0.8, parallel_tool_calls: false, tool_choice: 'required', previous_response_id: 'resp_0',
      reasoning: { effort: 'high', summary: 'auto' }, text: { format: { type: 'json_object' } }, truncation: 'auto', user: 'u', safety_identifier: 's', prompt_cache_key: 'pk',
    }));
    expect(r).toMatchObject({
      temperature: 0.5, top_p: 0.8, parallel_tool_calls: false, tool_choice: 'required', previous_response_id: 'resp_0',
      reasoning: { effort: 'high', summary: 'auto' }, text: { format: { type: 'json_object' } }, truncation: 'auto', user: 'u', safety_identifier: 's', prompt_cache_key: 'pk',
    });
  });

  it('fails as a bad upstream answer without a choice', () => {
    const c = { ...completion({ content: 'x' }), choices: [] };
    expect(() => chatCompletionToResponse(c, opts())).toThrow(AgentgwError);
  });

  it('gives the official openai SDK a response it reads, output_text included', async () => {
    const body = chatCompletionToResponse(completion({ content: 'Hello ', tool_calls: [call('call_1', 'read', '{"p":"a"}')] }, 'tool_calls'), opts());
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: 'http://gateway.invalid/v1',
      fetch: async () => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } }),
    });
    const r = await client.responses.create({ model: 'gpt-5', input: 'hi' });
    expect(r.output_text).toBe('Hello ');
    expect(r.output[1]).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'read', arguments: '{"p":"a"}' });
    expect(r.usage?.input_tokens_details.cached_tokens).toBe(100);
  });
});

describe('responsesErrorCode', () => {
  it('maps agentgw codes to the codes Codex acts on', () => {
    expect(responsesErrorCode('upstream_rate_limited')).toBe('rate_limit_exceeded');
    expect(responsesErrorCode('rpm_exceeded')).toBe('rate_limit_exceeded');
    expect(responsesErrorCode('daily_budget_exceeded')).toBe('insufficient_quota');
    expect(responsesErrorCode('tenant_monthly_budget_exceeded')).toBe('insufficient_quota');
    expect(responsesErrorCode('upstream_timeout')).toBe('server_error');
  });
});
