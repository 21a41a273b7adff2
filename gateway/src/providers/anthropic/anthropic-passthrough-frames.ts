// Anthropic's SSE events passed on exactly as sent (a native /v1/messages stream): each is parsed to check it is whole;
// the usage events are read, to bill.
import type { EventSourceMessage } from 'eventsource-parser';
import { AgentgwError } from '../../contract/errors.js';
import type { FrameTranslator } from '../shared/frame-stream.js';
import type { ProviderIdentity } from '../shared/provider-identity.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from '../shared/sanitize-upstream-message.js';
import type { StreamMeter } from '../shared/stream-meter.js';
import { badUpstreamResponse, parseEventObject, streamEndedEarly } from '../shared/upstream-failure.js';
import type { AnthropicUsage } from './anthropic-api.js';
import { anthropicPromptUsage, mergeAnthropicPromptCounts } from './convert-anthropic-usage.js';
import { JSON_STRING, plainEvent } from '../shared/plain-events.js';

export class AnthropicPassthroughFrames implements FrameTranslator {
  private events = 0;
  private stopped = false;
  private stopReason: string | null = null;
  private promptCounts: AnthropicUsage = {};

  constructor(
    private readonly identity: ProviderIdentity,
    private readonly meter: StreamMeter,
  ) {}

  finishReason(): string | null {
    return this.stopReason;
  }

  event(event: EventSourceMessage): string | null {
    const data = event.data;
    this.events++;
    if ((event.event === undefined || event.event === '' || event.event === 'content_block_delta') && isPlainBlockDelta(data)) {
      // Most events of a long answer: whole JSON by the pattern itself, with nothing in it to read.
      return `event: content_block_delta\ndata: ${data}\n\n`;
    }
    const parsed = parseEventObject<{ type?: unknown }>(this.identity, data);
    // An event sent without its name (Bedrock's chunks carry none) is named by its type, as Anthropic SDKs read names.
    const name = event.event || (typeof parsed.type === 'string' ? parsed.type : '');
    switch (name) {
      case 'message_start': {
        const start = parsed as { message?: { usage?: AnthropicUsage } };
        this.promptCounts = mergeAnthropicPromptCounts({}, start.message?.usage ?? {});
        this.meter.report(anthropicPromptUsage(this.promptCounts));
        break;
      }
      case 'message_delta': {
        // Its usage is cumulative; newer API versions repeat the input and cache counts there too.
        const delta = parsed as { delta?: { stop_reason?: string | null }; usage?: AnthropicUsage };
        const usage = delta.usage ?? {};
        this.promptCounts = mergeAnthropicPromptCounts(this.promptCounts, usage);
        this.meter.report({ ...anthropicPromptUsage(this.promptCounts), ...(typeof usage.output_tokens === 'number' ? { completion_tokens: usage.output_tokens } : {}) });
        if (delta.delta?.stop_reason) this.stopReason = delta.delta.stop_reason;
        break;
      }
      case 'message_stop':
        this.stopped = true;
        break;
      case 'error': {
        const detail = sanitizeUpstreamMessage(this.identity, extractUpstreamMessage(data).message);
        throw new AgentgwError('upstream_unavailable', `Provider "${this.identity.name}" failed mid-stream${detail ? `: ${detail}` : '.'}`);
      }
      default:
        break;
    }
    // An event whose JSON spans several data lines leaves as one: a raw line break in JSON is only ever whitespace.
    const line = data.includes('\n') ? data.replaceAll('\n', ' ') : data;
    return name ? `event: ${name}\ndata: ${line}\n\n` : `data: ${line}\n\n`;
  }

  delivered(frame: string): void {
    // Kept unparsed; its text is counted only if the upstream never reports usage.
    if (frame.startsWith('event: content_block_delta')) this.meter.addRawChunk(frame);
  }

  end(): string | null {
    if (this.events === 0) throw badUpstreamResponse(this.identity, 'ended the stream without sending any event.');
    if (!this.stopped) throw streamEndedEarly(this.identity, 'message_stop');
    return null;
  }
}

/** A content_block_delta of text, thinking, a signature or tool input, exactly as Anthropic writes it (no spaces, this order). */
const PLAIN_BLOCK_DELTA = new RegExp(
  String.raw`^\{"type":"content_block_delta","index":(?:0|[1-9]\d{0,5}),"delta":\{"type":"(?:text_delta","text|thinking_delta","thinking|signature_delta","signature|input_json_delta","partial_json)":${JSON_STRING}\}\}$`,
);

/** True for a content_block_delta that only streams text (see PLAIN_BLOCK_DELTA): valid JSON, and nothing to read in it. */
export const isPlainBlockDelta = plainEvent(PLAIN_BLOCK_DELTA);

/** Text a content_block_delta frame streamed (text, thinking, tool input), for estimates. */
export function anthropicDeltaText(frame: string): string {
  const at = frame.indexOf('\ndata: ');
  if (at === -1) return '';
  try {
    const e = JSON.parse(frame.slice(at + 7)) as { delta?: { text?: string; thinking?: string; partial_json?: string } };
    return e.delta?.text ?? e.delta?.thinking ?? e.delta?.partial_json ?? '';
  } catch {
    return '';
  }
}
