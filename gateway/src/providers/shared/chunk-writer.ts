// Builds OpenAI chat.completion.chunk SSE frames for adapters that translate another format, recording streamed text.
import type { GeminiExtraContent, OpenAIFinishReason, OpenAIUsage, ThinkingBlockDelta } from '../openai-format.js';
import type { StreamMeter } from './stream-meter.js';

export class ChunkWriter {
  // The constant head of every chunk, serialised once per stream.
  private readonly head: string;
  private finish: OpenAIFinishReason | null = null;

  constructor(id: string, model: string, private readonly meter: StreamMeter, created = Math.floor(Date.now() / 1000)) {
    this.head = `data: {"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":[`;
  }

  finishReason(): OpenAIFinishReason | null {
    return this.finish;
  }

  role(): string {
    return this.choice('{"role":"assistant","content":""}', null);
  }

  text(text: string): string {
    this.meter.addText(text);
    return this.choice(`{"content":${JSON.stringify(text)}}`, null);
  }

  /** Reasoning text (Claude's thinking), as DeepSeek and vLLM stream it. */
  reasoning(text: string): string {
    this.meter.addText(text);
    return this.choice(`{"reasoning_content":${JSON.stringify(text)}}`, null);
  }

  /** The end of a signed thinking block (its signature), or a redacted one: what a later turn gives back to Claude. */
  thinkingBlock(block: ThinkingBlockDelta): string {
    return this.choice(`{"thinking_blocks":[${JSON.stringify(block)}]}`, null);
  }

  /** `extra`: Gemini's signature of the call (extra_content), as Google's OpenAI-compatible API streams it. */
  toolCallStart(index: number, id: string, name: string, args = '', extra?: GeminiExtraContent): string {
    this.meter.addText(name + args);
    const call = { index, id, type: 'function', function: { name, arguments: args }, ...(extra ? { extra_content: extra } : {}) };
    return this.choice(`{"tool_calls":[${JSON.stringify(call)}]}`, null);
  }

  toolCallArguments(index: number, args: string): string {
    this.meter.addText(args);
    return this.choice(`{"tool_calls":[{"index":${index},"function":{"arguments":${JSON.stringify(args)}}}]}`, null);
  }

  finished(reason: OpenAIFinishReason): string {
    this.finish = reason;
    return this.choice('{}', reason);
  }

  usage(usage: OpenAIUsage): string {
    return `${this.head}],"usage":${JSON.stringify(usage)}}\n\n`;
  }

  private choice(delta: string, finishReason: OpenAIFinishReason | null): string {
    return `${this.head}{"index":0,"delta":${delta},"finish_reason":${finishReason === null ? 'null' : `"${finishReason}"`}}]}\n\n`;
  }
}
