// Messages: `tool_use` blocks, decided; a denied one becomes a text block at the same index with the refusal.
import { proposedToolCall, refusalSentence } from '../../policy/tool-rules.js';
import type { StreamToolFilter } from './gated-source.js';
import { type ToolGate, frameData, sseFrames, withData } from './gate.js';

type Json = Record<string, unknown>;

/** The rules' view of a tool_use block's input: the JSON text of its input. */
function inputText(input: unknown): string {
  return input === undefined ? '{}' : JSON.stringify(input);
}

/**
 * Edits a message: each denied tool_use block is replaced by a text block with the refusal; a message left with no
 * tool_use ends its turn. Returns whether anything changed (else the upstream's text goes on as it came).
 */
export async function gateMessage(message: Json, gate: ToolGate): Promise<boolean> {
  const content = message.content;
  if (!Array.isArray(content)) return false;
  let denied = 0;
  let allowed = 0;
  for (let i = 0; i < content.length; i++) {
    const block = content[i] as Json;
    if (block?.type !== 'tool_use') continue;
    const name = String(block.name ?? '');
    const d = await gate.decide(String(block.id ?? ''), proposedToolCall(name, inputText(block.input)));
    if (d.action === 'allow') allowed++;
    else {
      denied++;
      content[i] = { type: 'text', text: refusalSentence(name, d) };
    }
  }
  if (denied === 0) return false;
  if (allowed === 0 && message.stop_reason === 'tool_use') message.stop_reason = 'end_turn';
  return true;
}

const event = (type: string, data: Json): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** The events of a text block with one text: what stands at a denied tool_use block's index. */
export function textBlockEvents(index: number, text: string): string {
  return (
    event('content_block_start', { index, content_block: { type: 'text', text: '' } }) +
    event('content_block_delta', { index, delta: { type: 'text_delta', text } }) +
    event('content_block_stop', { index })
  );
}

interface Held {
  index: number;
  id: string;
  name: string;
  start: unknown;
  json: string;
  frames: string;
}

/**
 * Messages events: a tool_use block is held from its content_block_start to its content_block_stop, then released as it
 * came or replaced by a text block at the same index (so every later index stands); stop_reason tool_use becomes
 * end_turn when no call is left.
 */
export class MessagesToolFilter implements StreamToolFilter {
  private held: Held | null = null;
  private allowed = 0;
  private denied = 0;

  constructor(private readonly gate: ToolGate) {}

  push(frame: string): string | Promise<string> {
    // Most frames are text deltas: read only the event name before parsing anything.
    if (this.held === null && !frame.startsWith('event: content_block_start') && !frame.startsWith('event: message_delta') && frame.startsWith('event:')) return frame;
    const data = frameData(frame);
    if (!data) return frame;
    const held = this.held;
    if (held !== null && data.index === held.index) {
      held.frames += frame;
      if (data.type === 'content_block_delta') {
        const delta = data.delta as Json | undefined;
        if (typeof delta?.partial_json === 'string') held.json += delta.partial_json;
        return '';
      }
      if (data.type === 'content_block_stop') return this.release();
      return '';
    }
    if (data.type === 'content_block_start') {
      const block = data.content_block as Json | undefined;
      if (block?.type === 'tool_use') {
        this.held = { index: Number(data.index), id: String(block.id ?? ''), name: String(block.name ?? ''), start: block.input, json: '', frames: frame };
        return '';
      }
      return frame;
    }
    if (data.type === 'message_delta') {
      const delta = data.delta as Json | undefined;
      if (delta?.stop_reason === 'tool_use' && this.allowed === 0 && this.denied > 0) {
        return withData(frame, { ...data, delta: { ...delta, stop_reason: 'end_turn' } });
      }
    }
    return frame;
  }

  private async release(): Promise<string> {
    const h = this.held!;
    this.held = null;
    const d = await this.gate.decide(h.id, proposedToolCall(h.name, h.json === '' ? inputText(h.start) : h.json));
    if (d.action === 'allow') {
      this.allowed++;
      return h.frames;
    }
    this.denied++;
    return textBlockEvents(h.index, refusalSentence(h.name, d));
  }

  async close(last: string, _failed: boolean): Promise<string> {
    let out = '';
    for (const frame of sseFrames(last)) {
      const r = this.push(frame);
      out += typeof r === 'string' ? r : await r;
    }
    // A tool_use block the stream broke off in is incomplete: the client never gets it.
    this.held = null;
    return out;
  }
}
