// Checks of a Responses SSE stream, shared by the encoder's tests and the fixtures' tests.
import { expect } from 'vitest';

export interface Event {
  event: string;
  data: Record<string, any>;
}

/** Responses SSE text -> its events; each event's name must be its data's type. */
export function parseEvents(sse: string): Event[] {
  expect(sse.endsWith('\n\n') || sse === '').toBe(true);
  return sse.split('\n\n').filter(Boolean).map((block) => {
    const [eventLine, dataLine, ...rest] = block.split('\n');
    expect(rest).toEqual([]);
    expect(eventLine.startsWith('event: ')).toBe(true);
    expect(dataLine.startsWith('data: ')).toBe(true);
    const event = eventLine.slice('event: '.length);
    const data = JSON.parse(dataLine.slice('data: '.length)) as Record<string, any>;
    expect(data.type).toBe(event);
    return { event, data };
  });
}

/**
 * Checks what the Responses stream promises (sequence numbers 0, 1, ...; created and in_progress first; one item open at
 * a time, added at the next output_index; parts and deltas addressed to the open item and part; each done event repeating
 * what the deltas built; a terminal event last) and returns the items the events build.
 */
export function wellFormedOutput(events: Event[]): any[] {
  events.forEach((e, i) => expect(e.data.sequence_number).toBe(i));
  expect(events[0].event).toBe('response.created');
  expect(events[1].event).toBe('response.in_progress');
  for (const e of events.slice(0, 2)) {
    expect(e.data.response.status).toBe('in_progress');
    expect(e.data.response.output).toEqual([]);
  }
  const last = events.at(-1)!;
  expect(['response.completed', 'response.incomplete', 'response.failed']).toContain(last.event);
  const items: any[] = [];
  let open: any = null;
  let part: any = null;
  const addr = (d: any) => {
    expect(open).not.toBeNull();
    expect(d.output_index).toBe(items.length - 1);
    expect(d.item_id).toBe(open.id);
  };
  for (const { event, data: d } of events.slice(2, -1)) {
    switch (event) {
      case 'response.output_item.added':
        expect(open).toBeNull();
        expect(d.output_index).toBe(items.length);
        open = structuredClone(d.item);
        if (open.type === 'message') expect(open).toMatchObject({ status: 'in_progress', role: 'assistant', content: [] });
        if (open.type === 'function_call') expect(open).toMatchObject({ status: 'in_progress', arguments: '' });
        if (open.type === 'custom_tool_call') expect(open.input).toBe('');
        if (open.type === 'reasoning') expect(open.summary).toEqual([]);
        items.push(open);
        break;
      case 'response.content_part.added':
        addr(d);
        expect(part).toBeNull();
        expect(d.content_index).toBe(open.content.length);
        part = structuredClone(d.part);
        expect(part.type === 'output_text' ? part.text : part.refusal).toBe('');
        open.content.push(part);
        break;
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        addr(d);
        expect(part?.type).toBe(event === 'response.output_text.delta' ? 'output_text' : 'refusal');
        expect(d.content_index).toBe(open.content.length - 1);
        expect(d.delta).not.toBe('');
        if (part.type === 'output_text') part.text += d.delta;
        else part.refusal += d.delta;
        break;
      case 'response.output_text.done':
        addr(d);
        expect(d.text).toBe(part.text);
        break;
      case 'response.refusal.done':
        addr(d);
        expect(d.refusal).toBe(part.refusal);
        break;
      case 'response.content_part.done':
        addr(d);
        expect(d.content_index).toBe(open.content.length - 1);
        expect(d.part).toEqual(part);
        part = null;
        break;
      case 'response.function_call_arguments.delta':
        addr(d);
        expect(open.type).toBe('function_call');
        open.arguments += d.delta;
        break;
      case 'response.function_call_arguments.done':
        addr(d);
        expect(d.arguments).toBe(open.arguments);
        expect(d.name).toBe(open.name);
        break;
      case 'response.custom_tool_call_input.delta':
        addr(d);
        expect(open.type).toBe('custom_tool_call');
        open.input += d.delta;
        break;
      case 'response.custom_tool_call_input.done':
        addr(d);
        expect(d.input).toBe(open.input);
        break;
      case 'response.reasoning_summary_part.added':
        addr(d);
        expect(d.summary_index).toBe(open.summary.length);
        open.summary.push(structuredClone(d.part));
        break;
      case 'response.reasoning_summary_text.delta':
        addr(d);
        open.summary.at(-1).text += d.delta;
        break;
      case 'response.reasoning_summary_text.done':
        addr(d);
        expect(d.text).toBe(open.summary.at(-1).text);
        break;
      case 'response.reasoning_summary_part.done':
        addr(d);
        expect(d.part).toEqual(open.summary.at(-1));
        break;
      case 'response.output_item.done': {
        expect(part).toBeNull();
        expect(d.output_index).toBe(items.length - 1);
        const { status: doneStatus, encrypted_content: doneEncrypted, ...doneRest } = d.item;
        const { status: _openStatus, encrypted_content: openEncrypted, ...openRest } = open;
        expect(doneRest).toEqual(openRest);
        // Opaque reasoning state (encrypted_content) may first come with the done item, once the reasoning is whole.
        if (openEncrypted != null) expect(doneEncrypted).toBe(openEncrypted);
        if (open.type === 'message' || open.type === 'function_call') expect(['completed', 'incomplete']).toContain(doneStatus);
        items[items.length - 1] = d.item;
        open = null;
        break;
      }
      case 'error':
        expect(last.event).toBe('response.failed');
        break;
      default:
        throw new Error(`unexpected ${event}`);
    }
  }
  if (last.event !== 'response.failed') {
    expect(open).toBeNull();
    expect(last.data.response.output).toEqual(items);
  } else {
    expect(last.data.response.output).toEqual(open ? items.slice(0, -1) : items);
  }
  return items;
}

/** The SDK's final response without what the SDK adds itself (output_text, output_parsed, parsed_arguments, parsed). */
export function wire(final: object): unknown {
  const copy = structuredClone(final) as Record<string, any>;
  delete copy.output_text;
  delete copy.output_parsed;
  for (const item of copy.output ?? []) {
    delete item.parsed_arguments;
    for (const part of item.content ?? []) delete part.parsed;
  }
  return copy;
}
