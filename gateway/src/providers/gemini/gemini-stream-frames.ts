// streamGenerateContent?alt=sse events (each a partial GenerateContentResponse) -> OpenAI chat.completion.chunk frames.
import type { Readable } from 'node:stream';
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIFinishReason } from '../openai-format.js';
import { ChunkWriter } from '../shared/chunk-writer.js';
import { completionId } from '../shared/completion-id.js';
import { toOpenAIUsage } from '../shared/openai-usage.js';
import type { ProviderIdentity } from '../shared/provider-identity.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from '../shared/sanitize-upstream-message.js';
import { sseEvents } from '../shared/sse-events.js';
import { parseEventObject, streamEndedEarly } from '../shared/upstream-failure.js';
import type { ReportedUsage, StreamMeter } from '../shared/stream-meter.js';
import type { GeminiResponse } from './gemini-api.js';
import { geminiToolCallId, signatureOf } from './convert-gemini-response.js';
import { geminiUsage } from './convert-gemini-usage.js';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.js';

export interface GeminiStreamOptions {
  identity: ProviderIdentity;
  body: Readable;
  meter: StreamMeter;
  model: string;
  requestId: string;
  includeUsage: boolean;
  state: { finishReason: OpenAIFinishReason | null };
}

export async function* geminiStreamFrames(o: GeminiStreamOptions): AsyncGenerator<string> {
  let writer: ChunkWriter | undefined;
  let toolCalls = 0;
  let usage: ReportedUsage = {};
  let finished = false;

  for await (const sse of sseEvents(o.body, o.identity)) {
    const event = parseEventObject<GeminiResponse & { error?: unknown }>(o.identity, sse.data);
    if (event.error) {
      const detail = sanitizeUpstreamMessage(o.identity, extractUpstreamMessage(sse.data).message);
      throw new AgentgwError('upstream_unavailable', `Provider "${o.identity.name}" failed mid-stream${detail ? `: ${detail}` : '.'}`);
    }
    if (!writer) {
      writer = new ChunkWriter(completionId(event.responseId, o.requestId), event.modelVersion ?? o.model, o.meter);
      yield writer.role();
    }
    if (event.usageMetadata) {
      usage = geminiUsage(event.usageMetadata);
      // Output counts are final only with the last event; until then only the prompt count is certain.
      o.meter.report({ prompt_tokens: usage.prompt_tokens, cached_prompt_tokens: usage.cached_prompt_tokens });
    }
    const candidate = event.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if ('text' in part) {
        if (part.thought) {
          if (part.text) yield writer.reasoning(part.text);
        } else if (part.text) yield writer.text(part.text);
      } else if ('functionCall' in part) {
        const index = toolCalls++;
        const id = geminiToolCallId(o.requestId, part.functionCall.id, 0, index);
        yield writer.toolCallStart(index, id, part.functionCall.name, JSON.stringify(part.functionCall.args ?? {}), signatureOf(part).extra_content);
      }
    }
    if (candidate?.finishReason) {
      finished = true;
      const finish = mapGeminiFinishReason(candidate.finishReason, toolCalls > 0);
      o.state.finishReason = finish;
      yield writer.finished(finish);
    } else if (!event.candidates?.length && event.promptFeedback?.blockReason) {
      finished = true;
      o.state.finishReason = 'content_filter';
      yield writer.finished('content_filter');
    }
  }
  if (!writer || !finished) throw streamEndedEarly(o.identity, 'a finishReason');
  if (usage.prompt_tokens !== undefined) {
    o.meter.report({ ...usage, completion_tokens: usage.completion_tokens ?? 0 });
  }
  if (o.includeUsage) yield writer.usage(toOpenAIUsage(o.meter.usage()));
}
