// OpenAI-format SSE passed through as-is: only the usage chunk is ever parsed, to bill it and honour include_usage.
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIChatCompletionChunk } from '../openai-format.js';
import type { ProviderIdentity } from '../shared/provider-identity.js';
import { fromOpenAIUsage, toOpenAIUsage } from '../shared/openai-usage.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from '../shared/sanitize-upstream-message.js';
import type { FrameTranslator } from '../shared/frame-stream.js';
import type { StreamMeter } from '../shared/stream-meter.js';
import { badUpstreamResponse, looksLikeJsonObject } from '../shared/upstream-failure.js';
import type { EventSourceMessage } from 'eventsource-parser';

const FINISH_REASON = /"finish_reason":\s*"(\w+)"/;

/** Index of the `{` of a `"usage": {...}` member, or -1 (`"usage":null` on ordinary chunks does not count). */
function usageObjectAt(data: string): number {
  // A quote inside a JSON string is escaped, so `"usage":` can only be a key.
  let i = data.lastIndexOf('"usage":');
  if (i === -1) return -1;
  i += 8;
  while (data.charCodeAt(i) === 32) i++;
  return data.charCodeAt(i) === 123 ? i : -1;
}

/** OpenAI-format events to client frames: passed through as they are, except the usage chunk, which is billed and kept or dropped. */
export class OpenAIFrameTranslator implements FrameTranslator {
  private events = 0;
  private usageSent = false;
  private firstChunk: string | undefined;
  private finish: string | null = null;

  constructor(
    private readonly identity: ProviderIdentity,
    private readonly meter: StreamMeter,
    private readonly includeUsage: boolean,
  ) {}

  finishReason(): string | null {
    return this.finish;
  }

  event(event: EventSourceMessage): string | null {
    const data = event.data;
    if (data === '[DONE]') return null;
    this.events++;
    if (event.event === 'error' || data.startsWith('{"error"')) {
      const detail = sanitizeUpstreamMessage(this.identity, extractUpstreamMessage(data).message);
      throw new AgentgwError('upstream_unavailable', `Provider "${this.identity.name}" failed mid-stream${detail ? `: ${detail}` : '.'}`);
    }
    if (!looksLikeJsonObject(data)) throw badUpstreamResponse(this.identity, 'sent a stream event that is not a JSON object.');
    this.firstChunk ??= data;
    const finish = FINISH_REASON.exec(data);
    if (finish) this.finish = finish[1]!;
    if (usageObjectAt(data) !== -1) {
      const chunk = JSON.parse(data) as OpenAIChatCompletionChunk & { x_groq?: { usage?: unknown } };
      const standard = fromOpenAIUsage(chunk.usage);
      // Groq reports usage under x_groq when stream_options is not honoured.
      const usage = standard ?? fromOpenAIUsage(chunk.x_groq?.usage);
      if (usage) this.meter.report(usage);
      if (standard && this.includeUsage) this.usageSent = true;
      else if (standard) {
        // The client did not ask for usage: drop a usage-only chunk, strip it from one that also carries choices.
        if (!chunk.choices?.length) return null;
        delete chunk.usage;
        return `data: ${JSON.stringify(chunk)}\n\n`;
      }
    }
    return `data: ${data}\n\n`;
  }

  delivered(frame: string): void {
    // `data: {...}\n\n`: the chunk is kept unparsed; its text is counted only if an estimate is ever needed.
    this.meter.addRawChunk(frame.slice(6, -2));
  }

  end(): string | null {
    if (this.events === 0) throw badUpstreamResponse(this.identity, 'ended the stream without sending any event.');
    if (this.includeUsage && !this.usageSent && this.firstChunk) {
      // The upstream reported no usage but the client asked for it: send the estimate in the usual final chunk.
      const head = JSON.parse(this.firstChunk) as OpenAIChatCompletionChunk;
      const chunk = { id: head.id, object: 'chat.completion.chunk', created: head.created, model: head.model, choices: [], usage: toOpenAIUsage(this.meter.usage()) };
      return `data: ${JSON.stringify(chunk)}\n\n`;
    }
    return null;
  }
}

/** Text a raw chunk streamed to the client (content, tool names, arguments), for estimates. */
export function openAIChunkText(raw: string): string {
  let chunk: OpenAIChatCompletionChunk;
  try {
    chunk = JSON.parse(raw) as OpenAIChatCompletionChunk;
  } catch {
    return '';
  }
  let text = '';
  for (const choice of chunk.choices ?? []) {
    const delta = choice.delta;
    if (!delta) continue;
    if (typeof delta.content === 'string') text += delta.content;
    for (const call of delta.tool_calls ?? []) text += (call.function?.name ?? '') + (call.function?.arguments ?? '');
  }
  return text;
}
