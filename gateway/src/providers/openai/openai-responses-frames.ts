// A native Responses API stream passed on exactly as sent: each event is parsed to check it is whole; the terminal and
// error events are read, to bill and to fail.
import type { EventSourceMessage } from 'eventsource-parser';
import { AgentgwError } from '../../contract/errors.js';
import type { FrameTranslator } from '../shared/frame-stream.js';
import type { ProviderIdentity } from '../shared/provider-identity.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from '../shared/sanitize-upstream-message.js';
import type { StreamMeter } from '../shared/stream-meter.js';
import { badUpstreamResponse, checkPassedEvent, parseEventObject, streamEndedEarly } from '../shared/upstream-failure.js';
import { fromResponse } from './openai-responses-usage.js';
import { JSON_INT, JSON_STRING, plainEvent } from '../shared/plain-events.js';

/** Events whose `delta` is text the model produced: counted for an estimate when the upstream reports no usage. */
const DELTA_EVENTS = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.function_call_arguments.delta',
  'response.custom_tool_call_input.delta',
  'response.reasoning_text.delta',
  'response.reasoning_summary_text.delta',
]);

/** A delta event (text, arguments, reasoning, refusal, tool input) exactly as OpenAI writes it: no spaces, this order. */
const PLAIN_DELTA = new RegExp(
  String.raw`^\{"type":"response\.(?:output_text|function_call_arguments|custom_tool_call_input|reasoning_text|reasoning_summary_text|refusal)\.delta",` +
    String.raw`"sequence_number":${JSON_INT},"item_id":${JSON_STRING},"output_index":${JSON_INT},(?:"(?:content|summary)_index":${JSON_INT},)?` +
    String.raw`"delta":${JSON_STRING}(?:,"logprobs":\[\])?(?:,"obfuscation":${JSON_STRING})?\}$`,
);

/** True for a delta event in OpenAI's layout (see PLAIN_DELTA): valid JSON by the pattern itself, so it needs no parse. */
export const isPlainResponsesDelta = plainEvent(PLAIN_DELTA);

/** The events this translator reads: the terminal ones and `error`. */
const READ_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

const LEADING_TYPE = /^\s*\{\s*"type"\s*:\s*"([^"\\]*)"/;

export class OpenAIResponsesFrames implements FrameTranslator {
  private events = 0;
  private terminal = false;
  private finish: string | null = null;
  private final: Record<string, unknown> | null = null;

  constructor(
    private readonly identity: ProviderIdentity,
    private readonly meter: StreamMeter,
  ) {}

  finishReason(): string | null {
    return this.finish;
  }

  /** The response object of the terminal event, once one arrived (a failed one too: the caller may read its error). */
  finalResponse(): Record<string, unknown> | null {
    return this.final;
  }

  event(event: EventSourceMessage): string | null {
    const data = event.data;
    // Not part of the Responses API, but sent by some proxies in front of it: the terminal event already said it all.
    if (data === '[DONE]') return null;
    this.events++;
    // A named event that is not read (a delta, a snapshot) needs no parse beyond proving it whole (see checkPassedEvent).
    if (event.event && !READ_EVENTS.has(event.event)) {
      if (!isPlainResponsesDelta(data)) checkPassedEvent(this.identity, data);
      return sseFrame(event.event, data);
    }
    const parsed = parseEventObject<{ type?: unknown; response?: unknown }>(this.identity, data);
    const name = event.event || (typeof parsed.type === 'string' ? parsed.type : '');
    switch (name) {
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed': {
        const response = parsed.response;
        if (!response || typeof response !== 'object') throw badUpstreamResponse(this.identity, `sent a ${name} event without its response object.`);
        const r = response as { usage?: unknown; output?: unknown; incomplete_details?: { reason?: unknown } | null; error?: unknown };
        this.final = r as Record<string, unknown>;
        this.terminal = true;
        this.meter.report(fromResponse(r));
        // The client gets the gateway's own error event instead (as for Anthropic's `error`); finalResponse() keeps the upstream's.
        if (name === 'response.failed') throw responsesFailure(this.identity, JSON.stringify(r.error ?? null), 'mid-stream');
        const reason = r.incomplete_details?.reason;
        this.finish = typeof reason === 'string' ? reason : 'stop';
        break;
      }
      case 'error':
        throw responsesFailure(this.identity, data, 'mid-stream');
      default:
        break;
    }
    return sseFrame(event.event, data);
  }

  delivered(frame: string): void {
    // Kept unparsed; its text is counted only if the upstream never reports usage.
    if (DELTA_EVENTS.has(frameType(frame))) this.meter.addRawChunk(frame);
  }

  end(): string | null {
    if (this.events === 0) throw badUpstreamResponse(this.identity, 'ended the stream without sending any event.');
    if (!this.terminal) throw streamEndedEarly(this.identity, 'response.completed');
    return null;
  }
}

/**
 * The gateway's error for a Responses error (an `error` event, or the `error` of a failed response; its JSON text), mapped
 * as the chat path maps the same failure answered with an HTTP status: a prompt the model cannot take is the client's
 * request being wrong for it (validation_failed), a rate limit is upstream_rate_limited, anything else upstream_unavailable.
 */
export function responsesFailure(identity: ProviderIdentity, errorJson: string, where: 'mid-stream' | 'in its response'): AgentgwError {
  const { message, code, param } = extractUpstreamMessage(errorJson === 'null' ? '' : errorJson);
  const detail = sanitizeUpstreamMessage(identity, message);
  const said = detail ? `: ${detail}` : '.';
  const who = `Provider "${identity.name}"`;
  const named = code && code !== 'error' && /^[\w.-]{1,64}$/.test(code) ? ` (${code})` : '';
  switch (code) {
    case 'context_length_exceeded':
    case 'invalid_prompt':
      return new AgentgwError('validation_failed', `${who} rejected the request${named}${said}`, { param });
    case 'rate_limit_exceeded':
      return new AgentgwError('upstream_rate_limited', `${who} is rate limiting the gateway${named}${said}`, { headers: { 'retry-after': '1' } });
    default:
      return new AgentgwError('upstream_unavailable', `${who} failed ${where}${named}${said}`);
  }
}

/** `event: NAME\ndata: DATA\n\n` (or `data: DATA\n\n` when the upstream named none); a data of several lines stays several. */
function sseFrame(name: string | undefined, data: string): string {
  const lines = data.includes('\n') ? data.split('\n').join('\ndata: ') : data;
  return name ? `event: ${name}\ndata: ${lines}\n\n` : `data: ${lines}\n\n`;
}

/** The event name of a frame this translator wrote. */
function frameType(frame: string): string {
  if (frame.startsWith('event: ')) return frame.slice(7, frame.indexOf('\n'));
  return LEADING_TYPE.exec(frame.slice(6))?.[1] ?? '';
}

/** Text a delta frame streamed (output text, tool arguments, reasoning), for estimates. */
export function responsesDeltaText(frame: string): string {
  const at = frame.indexOf('data: ');
  if (at === -1) return '';
  try {
    const delta = (JSON.parse(frame.slice(at + 6).replaceAll('\ndata: ', '\n')) as { delta?: unknown }).delta;
    return typeof delta === 'string' ? delta : '';
  } catch {
    return '';
  }
}
