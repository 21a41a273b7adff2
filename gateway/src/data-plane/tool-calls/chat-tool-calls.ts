// Chat Completions: the calls of `tool_calls`, decided; a denied one is taken out and its refusal joins the content.
import { proposedToolCall, refusalSentence } from '../../policy/tool-rules.js';
import type { StreamToolFilter } from './gated-source.js';
import { type ToolGate, frameData, withData } from './gate.js';

type Json = Record<string, unknown>;

interface ChatCall {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

/**
 * Edits a completion's choices: denied calls out, their refusals appended to the content; a choice left with no call
 * ends its turn (`finish_reason: "stop"`). Returns whether anything changed (else the upstream's text goes on as it came).
 */
export async function gateChatCompletion(body: Json, gate: ToolGate): Promise<boolean> {
  let changed = false;
  const choices = Array.isArray(body.choices) ? (body.choices as Json[]) : [];
  for (const choice of choices) {
    const message = choice.message as Json | undefined;
    const calls = message?.tool_calls;
    if (!message || !Array.isArray(calls) || calls.length === 0) continue;
    const kept: ChatCall[] = [];
    const refusals: string[] = [];
    for (const call of calls as ChatCall[]) {
      const name = call.function?.name ?? '';
      const d = await gate.decide(call.id ?? '', proposedToolCall(name, call.function?.arguments ?? ''));
      if (d.action === 'allow') kept.push(call);
      else refusals.push(refusalSentence(name, d));
    }
    if (refusals.length === 0) continue;
    changed = true;
    const text = typeof message.content === 'string' ? message.content : '';
    message.content = text ? `${text}\n${refusals.join('\n')}` : refusals.join('\n');
    if (kept.length > 0) message.tool_calls = kept;
    else {
      delete message.tool_calls;
      if (choice.finish_reason === 'tool_calls') choice.finish_reason = 'stop';
    }
  }
  return changed;
}

interface HeldEvent {
  /** The frame as it came, when it carried this call's delta alone. */
  raw: string | null;
  chunk: Json;
}
interface HeldCall {
  index: number;
  id: string;
  name: string;
  args: string;
  role: unknown;
  events: HeldEvent[];
}
interface ChoiceState {
  held: HeldCall[];
  /** Calls of this choice released so far (the next one's index). */
  released: number;
  denied: number;
  hasText: boolean;
}

/** One chunk with one choice's delta (the envelope of `chunk`). */
function chunkWith(chunk: Json, choice: Json): Json {
  return { ...chunk, choices: [choice] };
}

/**
 * Chat chunks: a call's deltas are held from its first one until the choice's calls are complete (its finish_reason, or
 * the end of the stream), then released as they came (indices renumbered past denied calls) or replaced by a content delta.
 */
export class ChatToolFilter implements StreamToolFilter {
  private readonly choices = new Map<number, ChoiceState>();
  /** Some choice's text passed unparsed: a refusal after it starts on a new line. */
  private sawText = false;

  constructor(private readonly gate: ToolGate) {}

  private state(i: number): ChoiceState {
    let s = this.choices.get(i);
    if (!s) this.choices.set(i, (s = { held: [], released: 0, denied: 0, hasText: false }));
    return s;
  }

  push(frame: string): string | Promise<string> {
    // Most frames are text deltas with no call and no finish_reason: passed without parsing them.
    if (!frame.includes('"tool_calls"') && (!frame.includes('"finish_reason"') || frame.includes('"finish_reason":null'))) {
      if (!this.sawText && frame.includes('"content":"') && !frame.includes('"content":""')) this.sawText = true;
      return frame;
    }
    const data = frameData(frame);
    const choices = data?.choices;
    if (!data || !Array.isArray(choices) || choices.length === 0) return frame;
    let tools = false;
    let finishing = false;
    for (const c of choices as Json[]) {
      const delta = c.delta as Json | undefined;
      if (Array.isArray(delta?.tool_calls) && delta.tool_calls.length > 0) tools = true;
      if (c.finish_reason != null) finishing = true;
      if (typeof delta?.content === 'string' && delta.content !== '') this.state(Number(c.index ?? 0)).hasText = true;
    }
    if (!tools && !finishing) return frame;
    return this.edit(frame, data, choices as Json[], tools);
  }

  private async edit(frame: string, data: Json, choices: Json[], tools: boolean): Promise<string> {
    // The common frame: one choice, one call's delta and nothing else of note, held as it came.
    if (tools && choices.length === 1) {
      const c = choices[0]!;
      const delta = c.delta as Json;
      const calls = delta.tool_calls as Json[];
      const other = Object.keys(delta).some((k) => k !== 'tool_calls' && k !== 'role' && !(k === 'content' && (delta.content == null || delta.content === '')));
      if (calls.length === 1 && !other && c.finish_reason == null) {
        this.hold(Number(c.index ?? 0), calls[0]!, frame, data, delta.role);
        return '';
      }
    }
    let out = '';
    const rest: Json[] = [];
    for (const c of choices) {
      const i = Number(c.index ?? 0);
      const delta = (c.delta as Json | undefined) ?? {};
      const calls = delta.tool_calls;
      let choice = c;
      if (Array.isArray(calls) && calls.length > 0) {
        for (const call of calls as Json[]) this.hold(i, call, null, chunkWith(data, { index: i, delta: { tool_calls: [call] }, finish_reason: null }), delta.role);
        const { tool_calls: _, ...others } = delta;
        choice = { ...c, delta: others };
      }
      if (choice.finish_reason == null) {
        if (meaningful(choice.delta)) rest.push(choice);
        continue;
      }
      const s = this.state(i);
      const unchanged = !tools && choices.length === 1 && s.held.length === 0 && !(choice.finish_reason === 'tool_calls' && s.released === 0 && s.denied > 0);
      if (unchanged) return frame;
      // The choice's text goes first, then its calls as decided, then its finish_reason (stop when no call is left).
      if (meaningful(choice.delta)) {
        out += withData(frame, chunkWith(data, { ...choice, finish_reason: null }));
        choice = { ...choice, delta: {} };
      }
      out += await this.release(i, data);
      if (choice.finish_reason === 'tool_calls' && s.released === 0 && s.denied > 0) choice = { ...choice, finish_reason: 'stop' };
      out += withData(frame, chunkWith(data, choice));
    }
    // What is left of the frame once its calls are held: sent first, unless nothing of it remains.
    return (rest.length > 0 ? withData(frame, { ...data, choices: rest }) : '') + out;
  }

  private hold(choice: number, call: Json, raw: string | null, chunk: Json, role: unknown): void {
    const s = this.state(choice);
    const index = Number(call.index ?? 0);
    let held = s.held.find((h) => h.index === index);
    if (!held) s.held.push((held = { index, id: '', name: '', args: '', role, events: [] }));
    if (typeof call.id === 'string') held.id = call.id;
    const fn = call.function as { name?: unknown; arguments?: unknown } | undefined;
    if (typeof fn?.name === 'string') held.name += fn.name;
    if (typeof fn?.arguments === 'string') held.args += fn.arguments;
    held.events.push({ raw, chunk });
  }

  /** Decides and releases every call the choice holds. */
  private async release(choice: number, envelope: Json): Promise<string> {
    const s = this.state(choice);
    if (s.held.length === 0) return '';
    const held = s.held;
    s.held = [];
    const decisions = await Promise.all(held.map((h) => this.gate.decide(h.id, proposedToolCall(h.name, h.args))));
    let out = '';
    held.forEach((h, n) => {
      const d = decisions[n]!;
      if (d.action === 'allow') {
        const index = s.released++;
        for (const e of h.events) {
          if (e.raw !== null && index === h.index) out += e.raw;
          else out += withData('', renumbered(e.chunk, index));
        }
        return;
      }
      s.denied++;
      const content = (s.hasText || this.sawText ? '\n' : '') + refusalSentence(h.name, d);
      s.hasText = true;
      const first = h.events[0]?.chunk ?? envelope;
      const delta: Json = h.role !== undefined ? { role: h.role, content } : { content };
      out += withData('', chunkWith(first, { index: choice, delta, finish_reason: null }));
    });
    return out;
  }

  async close(last: string, failed: boolean): Promise<string> {
    let out = '';
    if (!failed) for (const i of this.choices.keys()) out += await this.release(i, {});
    return out + last;
  }
}

/** A delta with something in it besides its role. */
function meaningful(delta: unknown): boolean {
  if (!delta || typeof delta !== 'object') return false;
  for (const [k, v] of Object.entries(delta)) if (k !== 'role' && v != null && v !== '') return true;
  return false;
}

/** A held chunk with its call's index set to where it now stands. */
function renumbered(chunk: Json, index: number): Json {
  const choice = (chunk.choices as Json[])[0]!;
  const delta = choice.delta as Json;
  const call = (delta.tool_calls as Json[])[0]!;
  return { ...chunk, choices: [{ ...choice, delta: { ...delta, tool_calls: [{ ...call, index }] } }] };
}
