// OpenAI-format SSE passed through as sent: each chunk is parsed to check it is whole, to see its choices finish, and to
// bill and honour include_usage from the usage chunk; only a usage chunk the client did not ask for is written anew.
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIChatCompletionChunk } from '../openai-format.js';
import type { ProviderIdentity } from '../shared/provider-identity.js';
import { fromOpenAIUsage, toOpenAIUsage } from '../shared/openai-usage.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from '../shared/sanitize-upstream-message.js';
import type { FrameTranslator } from '../shared/frame-stream.js';
import type { StreamMeter } from '../shared/stream-meter.js';
import { badUpstreamResponse, parseEventObject, streamEndedEarly } from '../shared/upstream-failure.js';
import type { EventSourceMessage } from 'eventsource-parser';
import { JSON_STRING, plainEvent } from '../shared/plain-events.js';

type Chunk = Partial<OpenAIChatCompletionChunk> & { x_groq?: { usage?: unknown }; error?: unknown };

/**
 * OpenAI-format events to client frames: passed through as they are, except the usage chunk, which is billed and kept or
 * dropped. A stream is complete once every choice it streamed has its finish_reason, or at `data: [DONE]`: OpenAI sends
 * both, some compatible servers only the first. Ending before either (or with a chunk that does not parse) fails it.
 * Losing only what follows the last finish_reason (the usage chunk, [DONE]) leaves a whole answer, billed by estimate.
 */
export class OpenAIFrameTranslator implements FrameTranslator {
  private events = 0;
  private usageSent = false;
  private head: Pick<OpenAIChatCompletionChunk, 'id' | 'created' | 'model'> | undefined;
  private finish: string | null = null;
  /** Choices seen, and those of them that finished (index sets; one choice unless the request asked for n > 1). */
  private readonly streamed = new Set<number>();
  private readonly finished = new Set<number>();
  private done = false;

  constructor(
    private readonly identity: ProviderIdentity,
    private readonly meter: StreamMeter,
    private readonly includeUsage: boolean,
  ) {}

  finishReason(): string | null {
    return this.finish;
  }

  event(event: EventSourceMessage): string | null {
    if (this.done) return null;
    const data = event.data;
    if (data === '[DONE]') {
      this.done = true;
      return null;
    }
    this.events++;
    if (event.event === 'error' || data.startsWith('{"error"')) throw this.failure(data);
    if (this.head !== undefined && isPlainContentChunk(data)) {
      // Most chunks of a long answer: whole JSON by the pattern itself, and nothing in it to read but its choice.
      this.streamed.add(0);
      return `data: ${data}\n\n`;
    }
    const chunk = parseEventObject<Chunk>(this.identity, data);
    if (chunk.error) throw this.failure(data);
    this.head ??= { id: chunk.id!, created: chunk.created!, model: chunk.model! };
    const choices = chunk.choices;
    if (Array.isArray(choices)) {
      for (const choice of choices) {
        if (!choice || typeof choice !== 'object') continue;
        const index = typeof choice.index === 'number' ? choice.index : 0;
        this.streamed.add(index);
        if (typeof choice.finish_reason === 'string' && choice.finish_reason) {
          this.finished.add(index);
          this.finish = choice.finish_reason;
        }
      }
    }
    if (chunk.usage != null || chunk.x_groq?.usage != null) {
      const standard = fromOpenAIUsage(chunk.usage);
      // Groq reports usage under x_groq when stream_options is not honoured.
      const usage = standard ?? fromOpenAIUsage(chunk.x_groq?.usage);
      if (usage) this.meter.report(usage);
      if (standard && this.includeUsage) this.usageSent = true;
      else if (standard) {
        // The client did not ask for usage: drop a usage-only chunk, strip it from one that also carries choices.
        if (!choices?.length) return null;
        delete chunk.usage;
        return `data: ${JSON.stringify(chunk)}\n\n`;
      }
    }
    // A chunk whose JSON spans several data lines leaves as one: a raw line break in JSON is only ever whitespace.
    return `data: ${data.includes('\n') ? data.replaceAll('\n', ' ') : data}\n\n`;
  }

  delivered(frame: string): void {
    // `data: {...}\n\n`: the chunk is kept unparsed; its text is counted only if an estimate is ever needed.
    this.meter.addRawChunk(frame.slice(6, -2));
  }

  end(): string | null {
    if (this.events === 0) throw badUpstreamResponse(this.identity, 'ended the stream without sending any event.');
    if (!this.done && (this.streamed.size === 0 || this.finished.size < this.streamed.size)) throw streamEndedEarly(this.identity, 'a finish_reason or data: [DONE]');
    if (this.includeUsage && !this.usageSent && this.head) {
      // The upstream reported no usage but the client asked for it: send the estimate in the usual final chunk.
      const { id, created, model } = this.head;
      const chunk = { id, object: 'chat.completion.chunk', created, model, choices: [], usage: toOpenAIUsage(this.meter.usage()) };
      return `data: ${JSON.stringify(chunk)}\n\n`;
    }
    return null;
  }

  private failure(data: string): AgentgwError {
    const detail = sanitizeUpstreamMessage(this.identity, extractUpstreamMessage(data).message);
    return new AgentgwError('upstream_unavailable', `Provider "${this.identity.name}" failed mid-stream${detail ? `: ${detail}` : '.'}`);
  }
}

/**
 * A content delta of choice 0 exactly as OpenAI writes it (the recorded layout: no spaces, members in this order,
 * optional ones optional), nothing else: no finish_reason, no usage, no tool call, no error. What matches is valid JSON.
 */
const PLAIN_CONTENT_CHUNK = new RegExp(
  String.raw`^\{"id":${JSON_STRING},"object":"chat\.completion\.chunk","created":(?:0|[1-9]\d{0,14}),"model":${JSON_STRING},` +
    String.raw`(?:"service_tier":(?:${JSON_STRING}|null),)?(?:"system_fingerprint":(?:${JSON_STRING}|null),)?` +
    String.raw`"choices":\[\{"index":0,"delta":\{"content":${JSON_STRING}\},(?:"logprobs":null,)?"finish_reason":null\}\]` +
    String.raw`(?:,"usage":null)?(?:,"obfuscation":${JSON_STRING})?\}$`,
);

/** True for a chunk in OpenAI's layout that only streams text of choice 0 (see PLAIN_CONTENT_CHUNK): it needs no parse. */
export const isPlainContentChunk = plainEvent(PLAIN_CONTENT_CHUNK);

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
