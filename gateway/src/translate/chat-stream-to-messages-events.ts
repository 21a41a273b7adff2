// OpenAI chat.completion.chunk SSE frames -> Anthropic Messages SSE events, for a streamed answer from a chat upstream.
import { chatChunkOfFrame } from './chat-chunk-frame.js';
import type { OpenAIChatCompletionChunk, OpenAIToolCallDelta } from '../providers/openai-format.js';
import type { Usage } from '../providers/spec.js';
import { mapChatFinishToStopReason } from './map-chat-finish-to-stop-reason.js';
import { usageToMessagesUsage } from './usage-to-messages-usage.js';

interface TextItem {
  kind: 'text';
  state: 'pending' | 'open' | 'closed';
  index: number;
  /** Received but not yet sent (the block waits for its turn). */
  pending: string;
}

interface ToolItem {
  kind: 'tool';
  state: 'pending' | 'open' | 'closed';
  index: number;
  pending: string;
  id: string;
  name: string;
  /** Every argument fragment so far, to tell when the call is complete. */
  args: string;
}

type Item = TextItem | ToolItem;

export interface MessagesStreamOptions {
  /** The model the client asked for, as message_start names it. */
  model: string;
  messageId: string;
  /** Prompt tokens as estimated before the call: message_start comes before the upstream reports usage. */
  inputTokensEstimate: number;
}

/**
 * Anthropic content blocks come one after another, while OpenAI may interleave the argument deltas of parallel tool
 * calls. So one block is open at a time and streams live; what arrives for any other block waits in a queue, in the
 * order it first arrived, and is sent when the open block is done: a text block at once, a tool call when its
 * arguments are a complete JSON value, and everything at finish(). OpenAI's usual sequential calls thus stream live.
 */
export class MessagesStreamEncoder {
  private readonly opts: MessagesStreamOptions;
  private started = false;
  private finished = false;
  private nextIndex = 0;
  private open: Item | null = null;
  private readonly queue: Item[] = [];
  /** The text item that is open or waiting, if any: more text joins it. */
  private text: TextItem | null = null;
  private readonly tools = new Map<number, ToolItem>();
  private finishReason: string | null = null;
  private lastBlockWasTool = false;
  /** The start of a frame split across two calls. */
  private rest = '';
  private out = '';

  constructor(opts: MessagesStreamOptions) {
    this.opts = opts;
  }

  /** One or more `data: {chunk}\n\n` frames -> the Anthropic events they make (possibly none). */
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

  /** Closes every block and ends the message with the usage to report. */
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
    this.advance(true);
    if (this.open) this.close();
    this.finished = true;
    const stopReason = mapChatFinishToStopReason(this.finishReason, this.lastBlockWasTool);
    this.emit('message_delta', JSON.stringify({
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: usageToMessagesUsage(usage),
    }));
    this.emit('message_stop', '{"type":"message_stop"}');
    return this.take();
  }

  /** An error event, as Anthropic sends one mid-stream. */
  error(e: { type: string; message: string }): string {
    return `event: error\ndata: ${JSON.stringify({ type: 'error', error: e })}\n\n`;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    const { messageId, model, inputTokensEstimate } = this.opts;
    this.emit('message_start', JSON.stringify({
      type: 'message_start',
      message: {
        id: messageId,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: inputTokensEstimate, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
      },
    }));
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
      if (delta.content) this.addText(delta.content);
      // A refusal is what the model said: Anthropic has no separate field for it.
      if (delta.refusal) this.addText(delta.refusal);
      if (delta.tool_calls) for (const call of delta.tool_calls) this.addToolDelta(call);
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  private addText(fragment: string): void {
    const item = this.text;
    if (item && item.state === 'open') {
      this.emitDelta(item, fragment);
      return;
    }
    if (item) {
      item.pending += fragment;
      return;
    }
    this.text = { kind: 'text', state: 'pending', index: -1, pending: fragment };
    this.queue.push(this.text);
    this.advance(false);
  }

  private addToolDelta(call: OpenAIToolCallDelta): void {
    const fragment = call.function?.arguments ?? '';
    let item = this.tools.get(call.index);
    if (!item) {
      item = { kind: 'tool', state: 'pending', index: -1, pending: '', id: call.id ?? '', name: call.function?.name ?? '', args: '' };
      this.tools.set(call.index, item);
      this.queue.push(item);
    } else if (item.state === 'pending') {
      // Some servers send the id or the name in a later delta than the first.
      if (!item.id && call.id) item.id = call.id;
      if (!item.name && call.function?.name) item.name = call.function.name;
    }
    // A closed call's arguments were already complete JSON: nothing valid can follow them.
    if (item.state === 'closed' || !fragment) {
      if (item.state === 'pending') this.advance(false);
      return;
    }
    item.args += fragment;
    if (item.state === 'open') {
      this.emitDelta(item, fragment);
      if (this.queue.length > 0) this.advance(false);
    } else {
      item.pending += fragment;
      this.advance(false);
    }
  }

  /** Opens waiting blocks in turn while the open one is done (or always, when `force`). */
  private advance(force: boolean): void {
    while (this.queue.length > 0) {
      const open = this.open;
      if (open) {
        if (!force && open.kind === 'tool' && !argumentsComplete(open.args)) return;
        this.close();
      }
      this.openItem(this.queue.shift()!);
    }
  }

  private openItem(item: Item): void {
    item.state = 'open';
    item.index = this.nextIndex++;
    this.open = item;
    if (item.kind === 'text') {
      this.emit('content_block_start', `{"type":"content_block_start","index":${item.index},"content_block":{"type":"text","text":""}}`);
    } else {
      // Without an id from upstream, one the client can send back in its tool_result.
      if (!item.id) item.id = `toolu_${this.opts.messageId}_${item.index}`;
      const block = JSON.stringify({ type: 'tool_use', id: item.id, name: item.name, input: {} });
      this.emit('content_block_start', `{"type":"content_block_start","index":${item.index},"content_block":${block}}`);
    }
    this.lastBlockWasTool = item.kind === 'tool';
    if (item.pending) {
      this.emitDelta(item, item.pending);
      item.pending = '';
    }
  }

  private close(): void {
    const item = this.open!;
    item.state = 'closed';
    if (item === this.text) this.text = null;
    this.open = null;
    this.emit('content_block_stop', `{"type":"content_block_stop","index":${item.index}}`);
  }

  private emitDelta(item: Item, fragment: string): void {
    const delta = item.kind === 'text'
      ? `{"type":"text_delta","text":${JSON.stringify(fragment)}}`
      : `{"type":"input_json_delta","partial_json":${JSON.stringify(fragment)}}`;
    this.emit('content_block_delta', `{"type":"content_block_delta","index":${item.index},"delta":${delta}}`);
  }

  private emit(type: string, json: string): void {
    this.out += `event: ${type}\ndata: ${json}\n\n`;
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
