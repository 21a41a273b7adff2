// OpenAI-format SSE passed through as-is: only the usage chunk is ever parsed, to bill it and honour include_usage.
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIChatCompletionChunk } from '../openai-format.js';
import type { ProviderIdentity } from '../shared/provider-identity.js';
import { fromOpenAIUsage, toOpenAIUsage } from '../shared/openai-usage.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from '../shared/sanitize-upstream-message.js';
import { sseEvents } from '../shared/sse-events.js';
import type { StreamMeter } from '../shared/stream-meter.js';
import { badUpstreamResponse } from '../shared/upstream-failure.js';
import type { Readable } from 'node:stream';

const FINISH_REASON = /"finish_reason":\s*"(\w+)"/;

export interface OpenAIStreamState {
  finishReason: string | null;
}

/** Index of the `{` of a `"usage": {...}` member, or -1 (`"usage":null` on ordinary chunks does not count). */
function usageObjectAt(data: string): number {
  // A quote inside a JSON string is escaped, so `"usage":` can only be a key.
  let i = data.lastIndexOf('"usage":');
  if (i === -1) return -1;
  i += 8;
  while (data.charCodeAt(i) === 32) i++;
  return data.charCodeAt(i) === 123 ? i : -1;
}

export async function* openAIStreamFrames(
  identity: ProviderIdentity,
  body: Readable,
  meter: StreamMeter,
  includeUsage: boolean,
  state: OpenAIStreamState,
): AsyncGenerator<string> {
  let events = 0;
  let usageSent = false;
  let firstChunk: string | undefined;
  for await (const event of sseEvents(body)) {
    const data = event.data;
    if (data === '[DONE]') continue;
    events++;
    if (event.event === 'error' || data.startsWith('{"error"')) {
      const detail = sanitizeUpstreamMessage(identity, extractUpstreamMessage(data).message);
      throw new AgentgwError('upstream_unavailable', `Provider "${identity.name}" failed mid-stream${detail ? `: ${detail}` : '.'}`);
    }
    firstChunk ??= data;
    const finish = FINISH_REASON.exec(data);
    if (finish) state.finishReason = finish[1];

    if (usageObjectAt(data) !== -1) {
      const chunk = JSON.parse(data) as OpenAIChatCompletionChunk & { x_groq?: { usage?: unknown } };
      const standard = fromOpenAIUsage(chunk.usage);
      // Groq reports usage under x_groq when stream_options is not honoured.
      const usage = standard ?? fromOpenAIUsage(chunk.x_groq?.usage);
      if (usage) meter.report(usage);
      if (standard && includeUsage) usageSent = true;
      else if (standard) {
        // The client did not ask for usage: drop a usage-only chunk, strip it from one that also carries choices.
        if (!chunk.choices?.length) continue;
        delete chunk.usage;
        meter.addRawChunk(data);
        yield `data: ${JSON.stringify(chunk)}\n\n`;
        continue;
      }
    }
    meter.addRawChunk(data);
    yield `data: ${data}\n\n`;
  }
  if (events === 0) throw badUpstreamResponse(identity, 'ended the stream without sending any event.');
  if (includeUsage && !usageSent && firstChunk) {
    // The upstream reported no usage but the client asked for it: send the estimate in the usual final chunk.
    const head = JSON.parse(firstChunk) as OpenAIChatCompletionChunk;
    const chunk = { id: head.id, object: 'chat.completion.chunk', created: head.created, model: head.model, choices: [], usage: toOpenAIUsage(meter.usage()) };
    yield `data: ${JSON.stringify(chunk)}\n\n`;
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
