// Responses: call items (function_call, custom_tool_call and the built-in calls), decided; a denied one becomes a
// message item at the same output_index with the refusal.
import { randomBytes } from 'node:crypto';
import { type ProposedToolCall, refusalSentence } from '../../policy/tool-rules.js';
import type { StreamToolFilter } from './gated-source.js';
import { type ToolGate, callView, frameData, sseFrames, withData } from './gate.js';

type Json = Record<string, unknown>;

const BUILT_IN: Record<string, string> = {
  shell_call: 'shell',
  local_shell_call: 'local_shell',
  apply_patch_call: 'apply_patch',
  computer_call: 'computer',
  web_search_call: 'web_search',
};

/** Whether an output item is a call the rules decide. */
export function isCallItem(item: Json | undefined): boolean {
  const type = item?.type;
  return type === 'function_call' || type === 'custom_tool_call' || type === 'mcp_call' || (typeof type === 'string' && type in BUILT_IN);
}

/** The rules' view of a call item (CONTRACT: built-in calls by their kind, MCP calls as `mcp/<server_label>/<name>`). */
export function responsesCallView(item: Json): ProposedToolCall {
  const type = String(item.type);
  if (type === 'function_call') return callView(String(item.name ?? ''), typeof item.arguments === 'string' ? item.arguments : '');
  if (type === 'custom_tool_call') {
    const input = typeof item.input === 'string' ? item.input : '';
    return { name: String(item.name ?? ''), input, text: input };
  }
  if (type === 'mcp_call') return callView(`mcp/${String(item.server_label ?? '')}/${String(item.name ?? '')}`, typeof item.arguments === 'string' ? item.arguments : '');
  // Built-in calls: what they would do (a shell's action, a patch's operation, a computer's action, a search's action).
  const args = item.action ?? item.operation ?? {};
  const text = JSON.stringify(args);
  return { name: BUILT_IN[type]!, input: args, text };
}

/** The id a call item is known by in the trace: its call_id, else its item id. */
function callId(item: Json): string {
  return String(item.call_id ?? item.id ?? '');
}

/** The message item that stands in a denied call's place. */
export function refusalItem(text: string, status: 'in_progress' | 'completed' = 'completed'): Json {
  return {
    id: `msg_${randomBytes(24).toString('hex')}`,
    type: 'message',
    status,
    content: status === 'completed' ? [{ type: 'output_text', annotations: [], logprobs: [], text }] : [],
    role: 'assistant',
  };
}

/** Edits a response object's output: each denied call item replaced by a message item with the refusal. Returns whether anything changed. */
export async function gateResponse(response: Json, gate: ToolGate): Promise<boolean> {
  const output = response.output;
  if (!Array.isArray(output)) return false;
  let changed = false;
  for (let i = 0; i < output.length; i++) {
    const item = output[i] as Json;
    if (!isCallItem(item)) continue;
    const view = responsesCallView(item);
    const d = await gate.decide(callId(item), view);
    if (d.action === 'allow') continue;
    output[i] = refusalItem(refusalSentence(view.name, d));
    changed = true;
  }
  return changed;
}

/** The same replacements, already decided while streaming, applied to the response kept for previous_response_id. */
export function replaceItems(response: Json | null, replaced: ReadonlyMap<string, Json>): Json | null {
  if (!response || replaced.size === 0 || !Array.isArray(response.output)) return response;
  return { ...response, output: (response.output as Json[]).map((item) => (typeof item?.id === 'string' && replaced.get(item.id)) || item) };
}

interface Held {
  outputIndex: number;
  frames: string[];
  data: Json[];
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Responses events: a call item is held from its output_item.added to its output_item.done, then released as it came or
 * replaced by the six events of a message item at the same output_index; every later sequence_number moves by the
 * difference, and the terminal event's response lists the message item in the call's place.
 */
export class ResponsesToolFilter implements StreamToolFilter {
  private held: Held | null = null;
  /** What every later event's sequence_number moves by. */
  private shift = 0;
  /** Denied call items by their item id, with the message item that replaced each. */
  readonly replaced = new Map<string, Json>();

  constructor(private readonly gate: ToolGate) {}

  push(frame: string): string | Promise<string> {
    if (this.held === null && this.shift === 0 && this.replaced.size === 0 && !frame.includes('"response.output_item.added"')) return frame;
    const data = frameData(frame);
    if (!data) return frame;
    const held = this.held;
    if (held !== null && data.output_index === held.outputIndex) {
      held.frames.push(frame);
      held.data.push(data);
      if (data.type === 'response.output_item.done') return this.release();
      return '';
    }
    if (held === null && data.type === 'response.output_item.added' && isCallItem(data.item as Json | undefined)) {
      this.held = { outputIndex: Number(data.output_index), frames: [frame], data: [data] };
      return '';
    }
    if (TERMINAL.has(String(data.type)) && this.replaced.size > 0) {
      const response = replaceItems(data.response as Json, this.replaced);
      return withData(frame, { ...data, sequence_number: this.seq(data), response });
    }
    return this.shift === 0 ? frame : withData(frame, { ...data, sequence_number: this.seq(data) });
  }

  private seq(data: Json): unknown {
    return typeof data.sequence_number === 'number' ? data.sequence_number + this.shift : data.sequence_number;
  }

  private async release(): Promise<string> {
    const h = this.held!;
    this.held = null;
    const done = h.data[h.data.length - 1]!.item as Json;
    const view = responsesCallView(done);
    const d = await this.gate.decide(callId(done), view);
    if (d.action === 'allow') {
      if (this.shift === 0) return h.frames.join('');
      return h.frames.map((f, n) => withData(f, { ...h.data[n]!, sequence_number: this.seq(h.data[n]!) })).join('');
    }
    const text = refusalSentence(view.name, d);
    const item = refusalItem(text);
    this.replaced.set(String(done.id ?? ''), item);
    const first = h.data[0]!.sequence_number;
    const base = typeof first === 'number' ? first + this.shift : undefined;
    const events = messageItemEvents(item, h.outputIndex, text, base);
    this.shift += 6 - h.frames.length;
    return events;
  }

  async close(last: string, _failed: boolean): Promise<string> {
    let out = '';
    for (const frame of sseFrames(last)) {
      const r = this.push(frame);
      out += typeof r === 'string' ? r : await r;
    }
    // A call item the stream broke off in is incomplete: the client never gets it.
    this.held = null;
    return out;
  }
}

/** The six events of a message item with one output text. */
export function messageItemEvents(item: Json, outputIndex: number, text: string, seq: number | undefined): string {
  let n = seq;
  const ev = (type: string, data: Json): string => {
    const body = n === undefined ? { type, ...data } : { type, sequence_number: n++, ...data };
    return `event: ${type}\ndata: ${JSON.stringify(body)}\n\n`;
  };
  const itemId = item.id;
  const part = { type: 'output_text', annotations: [], text };
  return (
    ev('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } }) +
    ev('response.content_part.added', { item_id: itemId, output_index: outputIndex, content_index: 0, part: { ...part, text: '' } }) +
    ev('response.output_text.delta', { item_id: itemId, output_index: outputIndex, content_index: 0, delta: text, logprobs: [] }) +
    ev('response.output_text.done', { item_id: itemId, output_index: outputIndex, content_index: 0, text, logprobs: [] }) +
    ev('response.content_part.done', { item_id: itemId, output_index: outputIndex, content_index: 0, part }) +
    ev('response.output_item.done', { output_index: outputIndex, item })
  );
}
