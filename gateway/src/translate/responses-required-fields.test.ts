// What a native answer gets when its upstream leaves out a field the Open Responses specification requires.
import { describe, expect, it } from 'vitest';
import { checkResponseObject } from '../data-plane/dialects/responses/__fixtures__/open-responses-schema.js';
import { SnapshotFields, responsesObject, withRequiredFields, withRequiredSnapshotFields } from './responses-response-object.js';

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

describe('the snapshots of one stream (SnapshotFields)', () => {
  const snapshot = (type: string, response: unknown, n: number) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n, response })}\n\n`;
  const responsesOf = (frames: string) => frames.split(/(?<=\n\n)/).map((f) => JSON.parse(f.split('\n')[1]!.slice('data: '.length)).response as Record<string, unknown>);
  const lacking = without(['top_logprobs', 'safety_identifier', 'presence_penalty']);

  it('every snapshot gets what the first lacked, after what it has, as withRequiredFields adds it; each is a valid response object', () => {
    const fields = new SnapshotFields(() => ({ top_logprobs: 4 }));
    const inProgress = { ...lacking, status: 'in_progress', instructions: 'x'.repeat(20_000) };
    const out = [fields.frames(snapshot('response.created', lacking, 0)), fields.frames(snapshot('response.in_progress', inProgress, 1) + snapshot('response.completed', lacking, 2))].join('');
    const [a, b, c] = responsesOf(out);
    for (const [got, from] of [[a, lacking], [b, inProgress], [c, lacking]] as const) {
      const want = withRequiredFields(from, { top_logprobs: 4 })!;
      expect(got).toEqual(want);
      expect(Object.keys(got!)).toEqual(Object.keys(want));
      expect(checkResponseObject(got).errors).toEqual([]);
    }
  });

  it('a later snapshot that has a key the first lacked is read whole, not given the key twice', () => {
    const fields = new SnapshotFields(() => ({}));
    fields.frames(snapshot('response.created', lacking, 0));
    const completed = fields.frames(snapshot('response.completed', { ...lacking, top_logprobs: 9 }, 1));
    expect(completed.match(/"top_logprobs"/g)).toHaveLength(1);
    expect(responsesOf(completed)[0]).toMatchObject({ top_logprobs: 9, safety_identifier: null, presence_penalty: 0 });
  });

  it('function tools to complete, or a response that is not the last member of its event: every snapshot is read whole', () => {
    const fields = new SnapshotFields(() => ({}));
    const withTool = { ...lacking, tools: [TOOL] };
    for (let n = 0; n < 3; n++) {
      const [r] = responsesOf(fields.frames(snapshot('response.in_progress', withTool, n)));
      expect(r!.tools).toEqual([{ ...TOOL, description: null, strict: null }]);
      expect(checkResponseObject(r).errors).toEqual([]);
    }
    const last = new SnapshotFields(() => ({}));
    const notLast = (n: number) => `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', response: lacking, sequence_number: n, extra: { a: 1 } })}\n\n`;
    for (let n = 0; n < 2; n++) {
      const event = JSON.parse(last.frames(notLast(n)).split('\n')[1]!.slice(6));
      expect(event.extra).toEqual({ a: 1 });
      expect(event.response).toEqual(withRequiredFields(lacking, {}));
    }
  });

  it('when the first snapshot lacks nothing, later ones pass byte for byte', () => {
    const fields = new SnapshotFields(() => ({}));
    const frames = snapshot('response.created', complete, 0) + snapshot('response.completed', complete, 1);
    expect(fields.frames(frames)).toBe(frames);
  });
});

describe('SnapshotFields: later events edited as text read as the parsing way writes them', () => {
  const lacking = without(['top_logprobs', 'safety_identifier']);
  const first = `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: lacking })}\n\n`;
  /** One event's data as withSnapshotFields writes it: the response parsed and given what it lacks. */
  const parsingWay = (frame: string) => {
    const event = JSON.parse(frame.split('\n').find((l) => l.startsWith('data:'))!.slice(5)) as Record<string, unknown>;
    const r = event.response;
    if (!frame.includes('"response":{') || typeof r !== 'object' || r === null || Array.isArray(r)) return event;
    return { ...event, response: withRequiredFields(r as Record<string, unknown>, { top_logprobs: 4 }) ?? r };
  };
  const cases: Record<string, string> = {
    'an event that is not a snapshot, with a "response" object inside': `{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":{"type":"mcp_list_tools","id":"m","tools":[{"name":"t","input_schema":{"properties":{"response":{"type":"string"}},"x":{}}}]}}`,
    'an empty response': `{"type":"response.in_progress","sequence_number":1,"response":{}}`,
    'a response that is not the last member, an object after it': `{"type":"response.in_progress","sequence_number":1,"response":${JSON.stringify(lacking)},"extra":{"a":1}}`,
    'a lacking key written with an escape': `{"type":"response.in_progress","sequence_number":1,"response":${JSON.stringify(lacking).slice(0, -1)},"top\\u005flogprobs":9}}`,
    'a snapshot lacking more than the first': `{"type":"response.in_progress","sequence_number":1,"response":${JSON.stringify(without(['top_logprobs', 'safety_identifier', 'usage']))}}`,
    'a second top-level member of the same name after the response': `{"type":"response.in_progress","sequence_number":1,"response":${JSON.stringify(lacking)},"type":{"a":{}}}`,
  };
  for (const [name, data] of Object.entries(cases)) {
    it(name, () => {
      const fields = new SnapshotFields(() => ({ top_logprobs: 4 }));
      fields.frames(first);
      const frame = `event: x\ndata: ${data}\n\n`;
      const out = fields.frames(frame);
      expect(JSON.parse(out.split('\n')[1]!.slice(5))).toEqual(parsingWay(frame));
    });
  }

  const firstCases: Record<string, string> = {
    'a function tool whose type is written with an escape, lacking strict': `{"type":"response.created","response":${JSON.stringify({ ...lacking, tools: [TOOL] }).replace('"type":"function"', '"type":"func\\u0074ion"')}}`,
    'a function tool whose "type" member is named with an escape, lacking strict': `{"type":"response.created","response":${JSON.stringify({ ...lacking, tools: [TOOL] }).replace('"type":"function"', '"typ\\u0065":"function"')}}`,
    'a function tool lacking description, in a tools array with other tools': `{"type":"response.created","response":${JSON.stringify({ ...lacking, tools: [{ type: 'web_search' }, { ...TOOL, description: 'd' }] })}}`,
    'complete function tools and a tool whose "type" member is an object': `{"type":"response.created","response":${JSON.stringify({ ...lacking, tools: [{ ...TOOL, description: 'd', strict: true }, { type: { a: 'function' } }] })}}`,
    'an integer-like member of the event': `{"type":"response.created","7":1,"response":${JSON.stringify(lacking)}}`,
  };
  for (const [name, data] of Object.entries(firstCases)) {
    it(`the first snapshot: ${name}`, () => {
      const frame = `event: response.created\ndata: ${data}\n\n`;
      const out = new SnapshotFields(() => ({ top_logprobs: 4 })).frames(frame);
      const got = JSON.parse(out.split('\n')[1]!.slice(5)) as Record<string, unknown>;
      expect(got).toEqual(parsingWay(frame));
      expect(Object.keys(got.response as object)).toEqual(Object.keys(parsingWay(frame).response as object));
    });
  }

  it('the first snapshot, with a second member of the same name after its response, is read as the parsing way reads it', () => {
    const frame = `event: response.created\ndata: {"type":"response.created","response":${JSON.stringify(lacking)},"type":{"a":1}}\n\n`;
    const out = new SnapshotFields(() => ({ top_logprobs: 4 })).frames(frame);
    expect(JSON.parse(out.split('\n')[1]!.slice(5))).toEqual(parsingWay(frame));
  });
});

describe('SnapshotFields: later snapshots echoing the first one\'s tools', () => {
  const tools = [{ ...TOOL, description: 'Weather "now"', strict: false, parameters: { type: 'object', properties: { city: { type: 'string', description: '} ] {' } } } }, { type: 'web_search' }];
  const lacking = { ...without(['top_logprobs', 'safety_identifier']), tools };
  const first = `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: lacking })}\n\n`;
  const parsingWay = (data: string) => {
    const event = JSON.parse(data) as Record<string, unknown>;
    return { ...event, response: withRequiredFields(event.response as Record<string, unknown>, { top_logprobs: 4 }) ?? event.response };
  };
  const toolsText = JSON.stringify(tools);
  const cases: Record<string, string> = {
    'the same tools, the response last': JSON.stringify({ type: 'response.in_progress', sequence_number: 1, response: { ...lacking, status: 'in_progress' } }),
    'the same tools, then a key the first lacked': `{"type":"response.completed","sequence_number":2,"response":${JSON.stringify(lacking).slice(0, -1)},"top_logprobs":9}}`,
    'the same tools, the response not the last member': `{"type":"response.completed","sequence_number":2,"response":${JSON.stringify(lacking)},"extra":{"tools":${toolsText}}}`,
    'one more tool': JSON.stringify({ type: 'response.completed', sequence_number: 2, response: { ...lacking, tools: [...tools, { type: 'file_search' }] } }),
    'tools of which the first is a part': `{"type":"response.completed","sequence_number":2,"response":${JSON.stringify({ ...lacking, tools: [tools] })}}`,
  };
  it('a later stream whose first snapshot echoes the same tools, or tools that differ, reads as the parsing way', () => {
    new SnapshotFields(() => ({ top_logprobs: 4 })).frames(first);
    const lackingStrict = [tools[0], { type: 'function', name: 'f', description: 'd', parameters: {} }];
    for (const t of [tools, lackingStrict, [...tools, { type: 'file_search' }]]) {
      const data = JSON.stringify({ type: 'response.created', sequence_number: 0, response: { ...lacking, tools: t } });
      const out = new SnapshotFields(() => ({ top_logprobs: 4 })).frames(`event: response.created\ndata: ${data}\n\n`);
      const got = JSON.parse(out.split('\n')[1]!.slice(5)) as Record<string, unknown>;
      expect(got).toEqual(parsingWay(data));
      expect(Object.keys(got.response as object)).toEqual(Object.keys(parsingWay(data).response as object));
    }
  });

  for (const [name, data] of Object.entries(cases)) {
    it(name, () => {
      const fields = new SnapshotFields(() => ({ top_logprobs: 4 }));
      fields.frames(first);
      const out = fields.frames(`event: x\ndata: ${data}\n\n`);
      const got = JSON.parse(out.split('\n')[1]!.slice(5)) as Record<string, unknown>;
      expect(got).toEqual(parsingWay(data));
      expect(Object.keys(got.response as object)).toEqual(Object.keys(parsingWay(data).response as object));
    });
  }
});
