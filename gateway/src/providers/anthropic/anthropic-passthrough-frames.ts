// Anthropic's SSE events passed on exactly as sent (a native /v1/messages stream); only usage events are parsed, to bill.
import type { EventSourceMessage } from 'eventsource-parser';
import { AgentgwError } from '../../contract/errors.js';
import type { FrameTranslator } from '../shared/frame-stream.js';
import type { ProviderIdentity } from '../shared/provider-identity.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from '../shared/sanitize-upstream-message.js';
import type { StreamMeter } from '../shared/stream-meter.js';
import { badUpstreamResponse, looksLikeJsonObject } from '../shared/upstream-failure.js';
import type { AnthropicUsage } from './anthropic-api.js';
import { anthropicPromptUsage, mergeAnthropicPromptCounts } from './convert-anthropic-usage.js';

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
    const name = event.event ?? '';
    const data = event.data;
    this.events++;
    if (!looksLikeJsonObject(data)) throw badUpstreamResponse(this.identity, 'sent a stream event that is not a JSON object.');
    switch (name) {
      case 'message_start': {
        const start = JSON.parse(data) as { message?: { usage?: AnthropicUsage } };
        this.promptCounts = mergeAnthropicPromptCounts({}, start.message?.usage ?? {});
        this.meter.report(anthropicPromptUsage(this.promptCounts));
        break;
      }
      case 'message_delta': {
        // Its usage is cumulative; newer API versions repeat the input and cache counts there too.
        const delta = JSON.parse(data) as { delta?: { stop_reason?: string | null }; usage?: AnthropicUsage };
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
    return name ? `event: ${name}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
  }

  delivered(frame: string): void {
    // Kept unparsed; its text is counted only if the upstream never reports usage.
    if (frame.startsWith('event: content_block_delta')) this.meter.addRawChunk(frame);
  }

  end(): string | null {
    if (this.events === 0) throw badUpstreamResponse(this.identity, 'ended the stream without sending any event.');
    if (!this.stopped) throw new AgentgwError('upstream_unavailable', `Provider "${this.identity.name}" ended the stream before message_stop.`);
    return null;
  }
}

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
