// OpenAI chat.completion.chunk SSE frames -> OpenAI Responses SSE events, for a streamed answer from a chat upstream.
import { chatChunkOfFrame } from './chat-chunk-frame.js';
import type { OpenAIChatCompletionChunk, OpenAIToolCallDelta, ThinkingBlock, ThinkingBlockDelta } from '../providers/openai-format.js';
import { encodeThinkingBlocks } from './carried-thinking.js';
import type { Usage } from '../providers/spec.js';
import { customInput, reasoningText } from './chat-to-responses-response.js';
import type {
  ResponsesItemStatus,
  ResponsesOutputContent,
  ResponsesOutputItem,
  ResponsesResponse,
  ResponsesStatus,
} from './responses-api.js';
import { callId, itemId, type ResponsesObjectOptions, responsesErrorEvent, responsesObject, responsesUsage } from './responses-response-object.js';
import { type ClientToolIndex, responsesToolIndex } from './responses-tools.js';
import { stringifyBody } from '../json/stringify.js';

type ItemState = 'pending' | 'open' | 'closed';
type PartKind = 'output_text' | 'refusal';

interface ReasoningItem {
  kind: 'reasoning';
  state: ItemState;
  index: number;
  id: string;
  pending: string;
  text: string;
  /** Every reasoning fragment received, sent or waiting: the text of the thinking blocks. */
  received: string;
  /** How much of `received` the blocks so far hold. */
  taken: number;
  /** Claude's thinking blocks (signed) that this item stands for. */
  blocks: ThinkingBlock[];
  /** Whether its summary part was added (with the first text). */
  summaryOpen: boolean;
}

interface MessageItem {
  kind: 'message';
  state: ItemState;
  index: number;
  id: string;
  /** Received before the item opened, in order. */
  pending: Array<{ part: PartKind; text: string }>;
  /** Parts already done. */
  parts: ResponsesOutputContent[];
  /** The part being streamed. */
  part: { kind: PartKind; text: string } | null;
}

interface ToolItem {
  kind: 'tool';
  state: ItemState;
  index: number;
  id: string;
  pending: string;
  callId: string;
  /** The chat function name. */
  chatName: string;
  /** Every argument fragment so far. */
  args: string;
  /** Decided when the item opens: a custom tool's input is sent whole when the call is done. */
  custom: boolean;
}

type Item = ReasoningItem | MessageItem | ToolItem;

export interface ResponsesStreamOptions extends ResponsesObjectOptions {
  /** The client tools by chat function name (from responsesToChatRequest); else read from request.tools. */
  tools?: ClientToolIndex;
  /** Unix seconds of completion; now when absent (tests pin it). */
  now?: () => number;
}

/**
 * Responses output items come one after another (the SDK appends each output_item.added to `output`; Codex records
 * items as they are done), while OpenAI may interleave the argument deltas of parallel tool calls. So one item is open
 * at a time and streams live; what arrives for any other item waits in a queue, in the order it first arrived, and is
 * sent when the open item is done: a message or reasoning item at once, a tool call when its arguments are a complete
 * JSON value, and everything at finish(). `sequence_number` counts every event from 0.
 */
export class ResponsesStreamEncoder {
  private readonly opts: ResponsesStreamOptions;
  private readonly toolIndex: ClientToolIndex;
  private started = false;
  private finished = false;
  private sequence = 0;
  private open: Item | null = null;
  private readonly queue: Item[] = [];
  private nextIndex = 0;
  /** The message (or reasoning) item that is open or waiting, if any: more text joins it. */
  private message: MessageItem | null = null;
  private reasoning: ReasoningItem | null = null;
  private readonly tools = new Map<number, ToolItem>();
  /** Done items, by output index. */
  private readonly output: ResponsesOutputItem[] = [];
  private finishReason: string | null = null;
  private final: ResponsesResponse | null = null;
  /** The start of a frame split across two calls. */
  private rest = '';
  private out = '';

  constructor(opts: ResponsesStreamOptions) {
    this.opts = opts;
    this.toolIndex = opts.tools ?? responsesToolIndex(opts.request.tools);
  }

  /** One or more `data: {chunk}\n\n` frames -> the Responses events they make (possibly none). */
  frames(text: string): string {
    if (this.finished) return '';
    this.out = '';
    this.start();
    const buf = this.rest ? this.rest + text : text;
    let from = 0;
    for (let end = buf.indexOf('\n\n', from); end !== -1; end = buf.indexOf('\n\n', from)) {
      this.frame(buf, from, end);
      from = end + 2;
    }
    this.rest = from < buf.length ? buf.slice(from) : '';
    return this.take();
  }

  /** Closes every item and ends the response (response.completed, or response.incomplete when cut short) with usage. */
  finish(usage: Usage): string {
    if (this.finished) return '';
    this.out = '';
    this.start();
    if (this.rest) {
      // A last frame without its blank line.
      const buf = this.rest;
      this.rest = '';
      this.frame(buf, 0, buf.length);
    }
    const reason = this.finishReason === 'length' ? 'max_output_tokens' : this.finishReason === 'content_filter' ? 'content_filter' : null;
    this.advance(true);
    // The item open at the end is the one a limit or a filter cut short.
    if (this.open) this.close(reason ? 'incomplete' : 'completed');
    this.finished = true;
    const status: ResponsesStatus = reason ? 'incomplete' : 'completed';
    this.final = responsesObject(this.opts, {
      status,
      output: this.output,
      usage: responsesUsage(usage),
      completedAt: reason ? null : this.now(),
      incompleteReason: reason,
    });
    this.emit(reason ? 'response.incomplete' : 'response.completed', { response: this.final });
    return this.take();
  }

  /**
   * Ends the stream on a failure: an `error` event (the openai SDK's stream rejects on it) then `response.failed` with
   * the items done so far (Codex reads its error.code: rate_limit_exceeded retries, insufficient_quota stops).
   */
  error(e: { code: string; message: string }): string {
    if (this.finished) return '';
    this.out = '';
    this.start();
    this.finished = true;
    const { type: _type, sequence_number: _sequence, ...fields } = responsesErrorEvent(0, e.code, e.message);
    this.emit('error', fields);
    this.final = responsesObject(this.opts, { status: 'failed', output: this.output, usage: null, error: { code: e.code, message: e.message } });
    this.emit('response.failed', { response: this.final });
    return this.take();
  }

  /** The response as the last event sent it (completed, incomplete or failed), for the store; null until then. */
  response(): ResponsesResponse | null {
    return this.final;
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : Math.floor(Date.now() / 1000);
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    const response = responsesObject(this.opts, { status: 'in_progress', output: [], usage: null });
    this.emit('response.created', { response });
    this.emit('response.in_progress', { response });
  }

  /** The frame at buf[from, end): its data lines, one chunk. */
  private frame(buf: string, from: number, end: number): void {
    const chunk = chatChunkOfFrame(buf, from, end);
    if (chunk) this.chunk(chunk);
  }

  private chunk(chunk: OpenAIChatCompletionChunk): void {
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = choice.delta;
    if (delta) {
      const reasoning = reasoningText(delta as { reasoning_content?: unknown; reasoning?: unknown });
      if (reasoning) this.addReasoning(reasoning);
      if (delta.content) this.addText('output_text', delta.content);
      if (delta.refusal) this.addText('refusal', delta.refusal);
      if (delta.tool_calls) for (const call of delta.tool_calls) this.addToolDelta(call);
      if (delta.thinking_blocks) for (const block of delta.thinking_blocks) this.addThinkingBlock(block);
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  private addReasoning(fragment: string): void {
    const item = this.reasoning;
    if (item && item.state === 'open') {
      item.received += fragment;
      this.reasoningDelta(item, fragment);
      return;
    }
    if (item) {
      item.received += fragment;
      item.pending += fragment;
      return;
    }
    this.reasoning = this.newReasoning(fragment);
    this.advance(false);
  }

  private newReasoning(pending: string): ReasoningItem {
    const item: ReasoningItem = { kind: 'reasoning', state: 'pending', index: -1, id: '', pending, text: '', received: pending, taken: 0, blocks: [], summaryOpen: false };
    this.queue.push(item);
    return item;
  }

  /** The end of a thinking block: the reasoning text since the last block is its text; kept for encrypted_content. */
  private addThinkingBlock(delta: ThinkingBlockDelta): void {
    const item = (this.reasoning ??= this.newReasoning(''));
    if (delta.type === 'thinking' && typeof delta.signature === 'string') {
      item.blocks.push({ type: 'thinking', thinking: item.received.slice(item.taken), signature: delta.signature });
      item.taken = item.received.length;
    } else if (delta.type === 'redacted_thinking' && typeof delta.data === 'string') {
      item.blocks.push({ type: 'redacted_thinking', data: delta.data });
    }
    this.advance(false);
  }

  private addText(part: PartKind, fragment: string): void {
    const item = this.message;
    if (item && item.state === 'open') {
      this.textDelta(item, part, fragment);
      return;
    }
    if (item) {
      const last = item.pending.at(-1);
      if (last && last.part === part) last.text += fragment;
      else item.pending.push({ part, text: fragment });
      return;
    }
    this.message = { kind: 'message', state: 'pending', index: -1, id: '', pending: [{ part, text: fragment }], parts: [], part: null };
    this.queue.push(this.message);
    this.advance(false);
  }

  private addToolDelta(call: OpenAIToolCallDelta): void {
    const fragment = call.function?.arguments ?? '';
    let item = this.tools.get(call.index);
    if (!item) {
      item = { kind: 'tool', state: 'pending', index: -1, id: '', pending: '', callId: call.id ?? '', chatName: call.function?.name ?? '', args: '', custom: false };
      this.tools.set(call.index, item);
      this.queue.push(item);
    } else if (item.state === 'pending') {
      // Some servers send the id or the name in a later delta than the first.
      if (!item.callId && call.id) item.callId = call.id;
      if (!item.chatName && call.function?.name) item.chatName = call.function.name;
    } else if (!item.chatName && call.function?.name) {
      item.chatName = call.function.name;
    }
    // A closed call's arguments were already complete JSON: nothing valid can follow them.
    if (item.state === 'closed' || !fragment) {
      if (item.state === 'pending') this.advance(false);
      return;
    }
    item.args += fragment;
    if (item.state === 'open') {
      if (!item.custom) this.emit('response.function_call_arguments.delta', { item_id: item.id, output_index: item.index, delta: fragment });
      if (this.queue.length > 0) this.advance(false);
    } else {
      item.pending += fragment;
      this.advance(false);
    }
  }

  /** Opens waiting items in turn while the open one is done and the next one can open (or always, when `force`). */
  private advance(force: boolean): void {
    while (this.queue.length > 0) {
      // A call opens once its name is known: output_item.added names the tool and says whether it is a custom one.
      const next = this.queue[0];
      if (!force && next.kind === 'tool' && !next.chatName) return;
      const open = this.open;
      if (open) {
        if (!force && open.kind === 'tool' && !argumentsComplete(open.args)) return;
        this.close('completed');
      }
      this.openItem(this.queue.shift()!);
    }
  }

  private openItem(item: Item): void {
    item.state = 'open';
    item.index = this.nextIndex++;
    this.open = item;
    const { id: responseId } = this.opts;
    switch (item.kind) {
      case 'reasoning': {
        item.id = itemId('rs', responseId, item.index);
        this.emit('response.output_item.added', { output_index: item.index, item: { id: item.id, type: 'reasoning', summary: [] } });
        const pending = item.pending;
        item.pending = '';
        if (pending) this.reasoningDelta(item, pending);
        return;
      }
      case 'message': {
        item.id = itemId('msg', responseId, item.index);
        this.emit('response.output_item.added', { output_index: item.index, item: { id: item.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
        const pending = item.pending;
        item.pending = [];
        for (const p of pending) this.textDelta(item, p.part, p.text);
        return;
      }
      case 'tool': {
        const ref = this.toolIndex.get(item.chatName);
        item.custom = ref?.kind === 'custom';
        // Without an id from upstream, one the client can send back in its output item.
        if (!item.callId) item.callId = callId(responseId, item.index);
        item.id = itemId(item.custom ? 'ctc' : 'fc', responseId, item.index);
        this.emit('response.output_item.added', { output_index: item.index, item: this.toolItem(item, 'in_progress', true) });
        if (item.pending && !item.custom) {
          this.emit('response.function_call_arguments.delta', { item_id: item.id, output_index: item.index, delta: item.pending });
        }
        item.pending = '';
        return;
      }
    }
  }

  private close(status: ResponsesItemStatus): void {
    const item = this.open!;
    item.state = 'closed';
    this.open = null;
    const at = { item_id: item.id, output_index: item.index };
    let done: ResponsesOutputItem;
    switch (item.kind) {
      case 'reasoning': {
        if (item === this.reasoning) this.reasoning = null;
        // A redacted block alone has no text: no summary part was opened for it.
        const part = { type: 'summary_text' as const, text: item.text };
        if (item.summaryOpen) {
          this.emit('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: item.text });
          this.emit('response.reasoning_summary_part.done', { ...at, summary_index: 0, part });
        }
        done = { id: item.id, type: 'reasoning', summary: item.summaryOpen ? [part] : [] };
        // Claude's signed thinking, for the next turn to give back to Claude (and to no other family).
        if (item.blocks.length > 0) done.encrypted_content = encodeThinkingBlocks(item.blocks);
        break;
      }
      case 'message':
        if (item === this.message) this.message = null;
        this.closePart(item);
        done = { id: item.id, type: 'message', status, role: 'assistant', content: item.parts };
        break;
      case 'tool': {
        const ref = this.toolIndex.get(item.chatName);
        if (item.custom) {
          const input = customInput(item.args);
          if (input) this.emit('response.custom_tool_call_input.delta', { ...at, delta: input });
          this.emit('response.custom_tool_call_input.done', { ...at, input });
        } else {
          this.emit('response.function_call_arguments.done', { ...at, name: ref?.name ?? item.chatName, arguments: item.args });
        }
        done = this.toolItem(item, status, false);
        break;
      }
    }
    this.output[item.index] = done;
    this.emit('response.output_item.done', { output_index: item.index, item: done });
  }

  private toolItem(item: ToolItem, status: ResponsesItemStatus, empty: boolean): ResponsesOutputItem {
    const ref = this.toolIndex.get(item.chatName);
    const name = ref?.name ?? item.chatName;
    const out: ResponsesOutputItem = item.custom
      ? { id: item.id, type: 'custom_tool_call', call_id: item.callId, name, input: empty ? '' : customInput(item.args) }
      : { id: item.id, type: 'function_call', status, arguments: empty ? '' : item.args, call_id: item.callId, name };
    if (ref?.namespace) out.namespace = ref.namespace;
    return out;
  }

  private reasoningDelta(item: ReasoningItem, fragment: string): void {
    if (!item.summaryOpen) {
      item.summaryOpen = true;
      this.emit('response.reasoning_summary_part.added', { item_id: item.id, output_index: item.index, summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    item.text += fragment;
    this.emit('response.reasoning_summary_text.delta', { item_id: item.id, output_index: item.index, summary_index: 0, delta: fragment });
  }

  /** Text or refusal for an open message: a change of kind closes the part and opens the next. */
  private textDelta(item: MessageItem, kind: PartKind, fragment: string): void {
    if (item.part && item.part.kind !== kind) this.closePart(item);
    const at = { item_id: item.id, output_index: item.index, content_index: item.parts.length };
    if (!item.part) {
      item.part = { kind, text: '' };
      this.emit('response.content_part.added', { ...at, part: kind === 'output_text' ? { type: 'output_text', text: '', annotations: [] } : { type: 'refusal', refusal: '' } });
    }
    item.part.text += fragment;
    if (kind === 'output_text') this.emit('response.output_text.delta', { ...at, delta: fragment, logprobs: [] });
    else this.emit('response.refusal.delta', { ...at, delta: fragment });
  }

  private closePart(item: MessageItem): void {
    const part = item.part;
    if (!part) return;
    const at = { item_id: item.id, output_index: item.index, content_index: item.parts.length };
    let done: ResponsesOutputContent;
    if (part.kind === 'output_text') {
      this.emit('response.output_text.done', { ...at, text: part.text, logprobs: [] });
      done = { type: 'output_text', text: part.text, annotations: [] };
    } else {
      this.emit('response.refusal.done', { ...at, refusal: part.text });
      done = { type: 'refusal', refusal: part.text };
    }
    this.emit('response.content_part.done', { ...at, part: done });
    item.parts.push(done);
    item.part = null;
  }

  private emit(type: string, fields: Record<string, unknown>): void {
    const event = { type, sequence_number: this.sequence++, ...fields };
    // The response object echoes the request (its instructions and tools): written with the JSON of their long parts looked up.
    this.out += `event: ${type}\ndata: ${fields.response === undefined ? JSON.stringify(event) : stringifyBody(event).toString('latin1')}\n\n`;
  }

  private take(): string {
    const out = this.out;
    this.out = '';
    return out;
  }
}

/** Whether tool-call arguments are a whole JSON value; asked only while something waits, and parsed only when they end with "}". */
function argumentsComplete(args: string): boolean {
  let i = args.length - 1;
  while (i >= 0 && isSpace(args.charCodeAt(i))) i--;
  if (i < 0 || args.charCodeAt(i) !== 125 /* } */) return false;
  try {
    JSON.parse(args);
    return true;
  } catch {
    return false;
  }
}

function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9;
}
