// What a native answer gets when its upstream leaves out a field the Open Responses specification requires.
import { describe, expect, it } from 'vitest';
import { checkResponseObject } from '../data-plane/dialects/responses/__fixtures__/open-responses-schema.js';
import { responsesObject, withRequiredFields, withRequiredSnapshotFields } from './responses-response-object.js';

const TOOL = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } };
const complete = responsesObject({ id: 'resp_1', model: 'gpt-4.1', createdAt: 1, request: {} }, { status: 'completed', output: [], usage: null, completedAt: 2 }) as unknown as Record<string, unknown>;

function without(keys: string[], from = complete): Record<string, unknown> {
  return Object.fromEntries(Object.entries(from).filter(([k]) => !keys.includes(k)));
}

describe('withRequiredFields', () => {
  it('leaves a complete response alone (null: nothing to change)', () => {
    expect(withRequiredFields(complete, {})).toBeNull();
    expect(checkResponseObject(complete).errors).toEqual([]);
  });

  it('adds what is missing: the request\'s setting, else the default in effect; function tools say null for what they lack', () => {
    const upstream = { ...without(['presence_penalty', 'frequency_penalty', 'top_logprobs', 'max_tool_calls', 'safety_identifier']), tools: [TOOL, { type: 'web_search' }] };
    expect(checkResponseObject(upstream).errors.length).toBeGreaterThan(0);
    const filled = withRequiredFields(upstream, { top_logprobs: 5, max_tool_calls: 3, safety_identifier: 'user-7' })!;
    expect(filled).toMatchObject({ presence_penalty: 0, frequency_penalty: 0, top_logprobs: 5, max_tool_calls: 3, safety_identifier: 'user-7' });
    expect(filled.tools).toEqual([{ ...TOOL, description: null, strict: null }, { type: 'web_search' }]);
    // What the upstream said is kept, in its order, the additions after it.
    expect(Object.keys(filled).slice(0, Object.keys(upstream).length)).toEqual(Object.keys(upstream));
    expect(checkResponseObject(filled).errors).toEqual([]);
  });

  it('changes only the snapshots that lack something, byte for byte otherwise', () => {
    const snapshot = (type: string, response: unknown, n: number) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n, response })}\n\n`;
    const delta = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"\\"response\\":{"}\n\n';
    const lacking = snapshot('response.created', without(['top_logprobs']), 0);
    const whole = snapshot('response.completed', complete, 2);
    const out = withRequiredSnapshotFields(lacking + delta + whole, {});
    const frames = out.split(/(?<=\n\n)/);
    expect(frames[1]).toBe(delta);
    expect(frames[2]).toBe(whole);
    expect(JSON.parse(frames[0].split('\n')[1].slice('data: '.length)).response.top_logprobs).toBe(0);
    expect(frames[0].startsWith('event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{')).toBe(true);
    expect(withRequiredSnapshotFields(delta + whole, {})).toBe(delta + whole);
  });
});
