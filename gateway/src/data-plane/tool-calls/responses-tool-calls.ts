// Responses: call items (function_call, custom_tool_call and the built-in calls), decided; a denied one becomes a
// message item at the same output_index with the refusal.
import { randomHex } from '../../http/random-hex.js';
import { AgentgwError } from '../../contract/errors.js';
import { type ProposedToolCall, proposedToolCall, refusalSentence } from '../../policy/tool-rules.js';
import type { StreamToolFilter } from './gated-source.js';
import { type ToolGate, frameData, sseFrames, withData } from './gate.js';

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
  if (type === 'function_call') return proposedToolCall(String(item.name ?? ''), typeof item.arguments === 'string' ? item.arguments : '');
  if (type === 'custom_tool_call') {
    const input = typeof item.input === 'string' ? item.input : '';
    return { name: String(item.name ?? ''), input, text: input };
  }
  if (type === 'mcp_call') return proposedToolCall(`mcp/${String(item.server_label ?? '')}/${String(item.name ?? '')}`, typeof item.arguments === 'string' ? item.arguments : '');
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
    id: `msg_${randomHex(24)}`,
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
  frames: string[];
  data: Json[];
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Responses events: a call item is held from its output_item.added to its output_item.done, then released as it came or
 * replaced by the six events of a message item at the same output_index; events are numbered on from the upstream's
 * first sequence_number (rewritten only where the edit moved them), and the terminal event's response lists the message
 * item in the call's place.
 */
export class ResponsesToolFilter implements StreamToolFilter {
  /** Call items held, by output_index. */
  private readonly held = new Map<number, Held>();
  /** The sequence_number the next event sent carries (null until the first). */
  private next: number | null = null;
  /** Every event sent so far carried its upstream number: frames pass without being parsed. */
  private inStep = true;
  /** Denied call items by their item id, with the message item that replaced each. */
  readonly replaced = new Map<string, Json>();

  constructor(private readonly gate: ToolGate) {}

  push(frame: string): string | Promise<string> {
    // A frame with a \u escape of an ASCII character may spell the call's type (or a second `type`) so that no text search
    // sees it: it is parsed.
    if (this.held.size === 0 && this.inStep && !frame.includes('"response.output_item.added"') && !escapesAscii(frame)) {
      if (this.next !== null) {
        if (frame.includes('"sequence_number"')) this.next++;
        return frame;
      }
      // The first event (response.created, which echoes the request's instructions and tools): only its number is
      // needed, read where OpenAI writes it, after the type, without parsing the whole snapshot.
      const seq = leadingSequenceNumber(frame);
      if (seq !== undefined) {
        this.next = seq + 1;
        return frame;
      }
    }
    const data = frameData(frame);
    if (!data) {
      // An event too large to be parsed whole on its way in is only known to open and close as an object: one that is
      // not JSON could be a call item a lenient client reads, so it is not passed on unread.
      if (frame.split('\n').some((l) => l.startsWith('data:'))) throw new AgentgwError('upstream_bad_response', 'The provider sent a stream event that is not valid JSON.', { retryable: true });
      return frame;
    }
    // Numbering goes on from the upstream's first event, whether it is sent at once or held.
    if (this.next === null && typeof data.sequence_number === 'number') this.next = data.sequence_number;
    const index = typeof data.output_index === 'number' ? data.output_index : null;
    const held = index === null ? undefined : this.held.get(index);
    if (held) {
      held.frames.push(frame);
      held.data.push(data);
      if (data.type === 'response.output_item.done') return this.release(index!, held);
      return '';
    }
    if (index !== null && data.type === 'response.output_item.added' && isCallItem(data.item as Json | undefined)) {
      this.held.set(index, { frames: [frame], data: [data] });
      return '';
    }
    if (TERMINAL.has(String(data.type)) && this.replaced.size > 0) {
      return this.send(frame, { ...data, response: replaceItems(data.response as Json, this.replaced) }, true);
    }
    return this.send(frame, data, false);
  }

  /** One event as sent: its number set to the next one when it differs (or when the event was edited). */
  private send(frame: string, data: Json, edited: boolean): string {
    const seq = data.sequence_number;
    if (typeof seq !== 'number') return edited ? withData(frame, data) : frame;
    if (this.next === null) this.next = seq;
    const n = this.next++;
    if (seq === n && !edited) return frame;
    if (seq !== n) this.inStep = false;
    return withData(frame, { ...data, sequence_number: n });
  }

  private async release(index: number, h: Held): Promise<string> {
    this.held.delete(index);
    const done = h.data[h.data.length - 1]!.item as Json;
    const view = responsesCallView(done);
    const d = await this.gate.decide(callId(done), view);
    if (d.action === 'allow') return h.frames.map((f, n) => this.send(f, h.data[n]!, false)).join('');
    const text = refusalSentence(view.name, d);
    const item = refusalItem(text);
    this.replaced.set(String(done.id ?? ''), item);
    const first = h.data[0]!.sequence_number;
    if (this.next === null && typeof first === 'number') this.next = first;
    const seq = typeof first === 'number' ? this.next! : undefined;
    if (seq !== undefined) this.next = seq + 6;
    // Six events stand in for the call's: the upstream's numbers no longer line up with what is sent.
    this.inStep = false;
    return messageItemEvents(item, index, text, seq);
  }

  async close(last: string, _failed: boolean): Promise<string> {
    let out = '';
    for (const frame of sseFrames(last)) {
      const r = this.push(frame);
      out += typeof r === 'string' ? r : await r;
    }
    // A call item the stream broke off in is incomplete: the client never gets it.
    this.held.clear();
    return out;
  }
}

/** Whether `text` has a `\u00XX` escape of an ASCII character (the only way to write a name's letters other than as themselves). */
function escapesAscii(text: string): boolean {
  for (let at = text.indexOf('\\u00'); at !== -1; at = text.indexOf('\\u00', at + 4)) {
    const c = text.charCodeAt(at + 4);
    if (c >= 0x30 && c <= 0x37) return true;
  }
  return false;
}

/** `{"type":"...","sequence_number":N` at the start of a frame's data, and no other: N, else undefined (the frame is then parsed). */
const LEADING_SEQUENCE = /^ ?\{\s*"type"\s*:\s*"[^"\\]*"\s*,\s*"sequence_number"\s*:\s*(0|[1-9]\d{0,15})\s*[,}]/;
function leadingSequenceNumber(frame: string): number | undefined {
  let at: number;
  if (frame.startsWith('data:')) at = 5;
  else {
    const line = frame.indexOf('\ndata:');
    if (line === -1) return undefined;
    at = line + 6;
  }
  const m = LEADING_SEQUENCE.exec(frame.slice(at, at + 200));
  // A second sequence_number (JSON.parse keeps the last) or a nested one: the frame is parsed.
  if (!m || frame.includes('"sequence_number"', at + m[0].length)) return undefined;
  return Number(m[1]);
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
