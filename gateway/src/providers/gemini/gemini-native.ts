// generateContent, streamGenerateContent?alt=sse and countTokens passed through as sent (the Gemini dialect served
// natively): the client's body with the target's model in the path, the upstream's answer and events unchanged; the
// usage read from usageMetadata to bill (thoughts and cached tokens included).
import type { EventSourceMessage } from 'eventsource-parser';
import { AgentgwError } from '../../contract/errors.js';
import { withMembers } from '../../json/received-json.js';
import { countTokens } from '../shared/count-tokens.js';
import type { FrameTranslator } from '../shared/frame-stream.js';
import type { ProviderIdentity } from '../shared/provider-identity.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from '../shared/sanitize-upstream-message.js';
import type { StreamMeter } from '../shared/stream-meter.js';
import { badUpstreamResponse, parseEventObject, streamEndedEarly } from '../shared/upstream-failure.js';
import type { GeminiCallContext, Usage } from '../spec.js';
import type { GeminiPart, GeminiResponse } from './gemini-api.js';
import { geminiUsage } from './convert-gemini-usage.js';

/**
 * The body an upstream receives: the client's (its received bytes when no check edited it), without a `model` member
 * (the path names the target's model).
 */
export function nativeGeminiBody(body: Record<string, unknown>): Buffer {
  return withMembers(body, { model: undefined });
}

/** The text and calls of an answer's parts (thoughts included: they are billed output), for estimates. */
function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  let text = '';
  for (const p of parts as GeminiPart[]) {
    if (p && typeof p === 'object') {
      if ('text' in p && typeof p.text === 'string') text += p.text;
      else if ('functionCall' in p && p.functionCall) text += (p.functionCall.name ?? '') + JSON.stringify(p.functionCall.args ?? {});
    }
  }
  return text;
}

function answerText(r: GeminiResponse): string {
  let text = '';
  for (const c of r.candidates ?? []) text += partsText(c?.content?.parts);
  return text;
}

/** The usage of an answer passed through as sent; counted locally when the upstream reports none. */
export function nativeGeminiUsage(identity: ProviderIdentity, r: GeminiResponse, ctx: GeminiCallContext): Usage {
  if (!Array.isArray(r.candidates) && !r.promptFeedback) throw badUpstreamResponse(identity, 'answered without candidates.');
  const u = geminiUsage(r.usageMetadata);
  const known = u.prompt_tokens !== undefined && u.completion_tokens !== undefined;
  return { ...u, prompt_tokens: u.prompt_tokens ?? ctx.estimatePromptTokens(), completion_tokens: u.completion_tokens ?? countTokens(answerText(r)), estimated: !known };
}

/** The text one of this stream's frames carried, for estimates when the upstream never reports usage. */
export function geminiFrameText(frame: string): string {
  const at = frame.indexOf('data: ');
  if (at === -1) return '';
  try {
    return answerText(JSON.parse(frame.slice(at + 6)) as GeminiResponse);
  } catch {
    return '';
  }
}

export class GeminiPassthroughFrames implements FrameTranslator {
  private events = 0;
  private finish: string | null = null;

  constructor(
    private readonly identity: ProviderIdentity,
    private readonly meter: StreamMeter,
  ) {}

  finishReason(): string | null {
    return this.finish;
  }

  event(event: EventSourceMessage): string | null {
    const data = event.data;
    this.events++;
    const parsed = parseEventObject<GeminiResponse & { error?: unknown }>(this.identity, data);
    if (parsed.error !== undefined) {
      const detail = sanitizeUpstreamMessage(this.identity, extractUpstreamMessage(data).message);
      throw new AgentgwError('upstream_unavailable', `Provider "${this.identity.name}" failed mid-stream${detail ? `: ${detail}` : '.'}`);
    }
    const meta = parsed.usageMetadata;
    if (meta) {
      const u = geminiUsage(meta);
      // Output counts are final only once the answer reports them; until then only the prompt is certain.
      const final = typeof meta.candidatesTokenCount === 'number' || typeof meta.thoughtsTokenCount === 'number';
      this.meter.report(final ? u : { prompt_tokens: u.prompt_tokens, cached_prompt_tokens: u.cached_prompt_tokens });
    }
    for (const c of parsed.candidates ?? []) if (c?.finishReason) this.finish = c.finishReason;
    if (!parsed.candidates?.length && parsed.promptFeedback?.blockReason) this.finish = parsed.promptFeedback.blockReason;
    // An event whose JSON spans several data lines leaves as one: a raw line break in JSON is only ever whitespace.
    const line = data.includes('\n') ? data.replaceAll('\n', ' ') : data;
    return `data: ${line}\n\n`;
  }

  delivered(frame: string): void {
    this.meter.addRawChunk(frame);
  }

  end(): string | null {
    if (this.events === 0) throw badUpstreamResponse(this.identity, 'ended the stream without sending any event.');
    if (this.finish === null) throw streamEndedEarly(this.identity, 'a finishReason');
    return null;
  }
}
