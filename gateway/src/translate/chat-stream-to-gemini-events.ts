// OpenAI chat.completion.chunk SSE frames -> Gemini streamGenerateContent (alt=sse) events, for a streamed answer from an
// upstream that does not speak Gemini. Text, and reasoning as thought parts when the client asked for them, streams as it
// comes; Gemini sends a function call whole, so each call is sent once its arguments are complete (at the finish), in the
// last event with the finishReason and the usage.
import type { GeminiPart } from '../providers/gemini/gemini-api.js';
import type { OpenAIChatCompletionChunk, ThinkingBlock } from '../providers/openai-format.js';
import type { Usage } from '../providers/spec.js';
import { encodeThinkingBlocks } from './carried-thinking.js';
import { chatChunkOfFrame } from './chat-chunk-frame.js';
import { geminiArgs, geminiFinishReason, geminiUsageMetadata } from './chat-to-gemini-response.js';

interface Call {
  id: string;
  name: string;
  args: string;
}

export class GeminiStreamEncoder {
  private readonly calls = new Map<number, Call>();
  private finish: string | null = null;
  private rest = '';
  private out = '';
  private finished = false;
  // Claude's thinking blocks as they end (their text came as reasoning_content), for the first call's thoughtSignature.
  private readonly thinking: ThinkingBlock[] = [];
  private thinkingText = '';

  /** `thoughts`: the client asked for thought parts (includeThoughts), which streamed reasoning_content becomes. */
  constructor(private readonly opts: { model: string; responseId: string; thoughts?: boolean }) {}

  /** One or more `data: {chunk}\n\n` frames -> the Gemini events they make (possibly none). */
  frames(text: string): string {
    if (this.finished) return '';
    this.out = '';
    const buf = this.rest ? this.rest + text : text;
    let from = 0;
    for (let end = buf.indexOf('\n\n', from); end !== -1; end = buf.indexOf('\n\n', from)) {
      const chunk = chatChunkOfFrame(buf, from, end);
      if (chunk) this.chunk(chunk);
      from = end + 2;
    }
    this.rest = from < buf.length ? buf.slice(from) : '';
    return this.take();
  }

  /** The last event: the calls, the finishReason and the usage. */
  close(usage: Usage): string {
    if (this.finished) return '';
    this.out = '';
    if (this.rest) {
      const buf = this.rest;
      this.rest = '';
      const chunk = chatChunkOfFrame(buf, 0, buf.length);
      if (chunk) this.chunk(chunk);
    }
    this.finished = true;
    const parts: GeminiPart[] = [];
    for (const call of [...this.calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c)) {
      const part: GeminiPart = { functionCall: { id: call.id, name: call.name, args: geminiArgs(call.args) } };
      if (parts.length === 0 && this.thinking.length > 0) part.thoughtSignature = encodeThinkingBlocks(this.thinking);
      parts.push(part);
    }
    this.emit({
      candidates: [{ content: { role: 'model', parts }, finishReason: geminiFinishReason(this.finish), index: 0 }],
      usageMetadata: geminiUsageMetadata(usage),
    });
    return this.take();
  }

  private chunk(chunk: OpenAIChatCompletionChunk): void {
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = choice.delta;
    if (delta) {
      if (delta.reasoning_content) this.thinkingText += delta.reasoning_content;
      for (const block of delta.thinking_blocks ?? []) {
        this.thinking.push(block.type === 'thinking' ? { type: 'thinking', thinking: this.thinkingText, signature: block.signature } : block);
        if (block.type === 'thinking') this.thinkingText = '';
      }
      if (this.opts.thoughts && delta.reasoning_content) this.emit({ candidates: [{ content: { role: 'model', parts: [{ text: delta.reasoning_content, thought: true }] }, index: 0 }] });
      const text = (delta.content ?? '') + (delta.refusal ?? '');
      if (text) this.emit({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }] });
      for (const d of delta.tool_calls ?? []) {
        const index = d.index ?? 0;
        let call = this.calls.get(index);
        if (!call) this.calls.set(index, (call = { id: '', name: '', args: '' }));
        if (d.id) call.id = d.id;
        if (d.function?.name) call.name += d.function.name;
        if (d.function?.arguments) call.args += d.function.arguments;
      }
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
  }

  private emit(event: Record<string, unknown>): void {
    this.out += `data: ${JSON.stringify({ ...event, modelVersion: this.opts.model, responseId: this.opts.responseId })}\n\n`;
  }

  private take(): string {
    const s = this.out;
    this.out = '';
    return s;
  }
}
