// ConverseStream events (AWS event-stream frames) -> OpenAI chat.completion.chunk frames.
import type { Readable } from 'node:stream';
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIFinishReason } from '../openai-format.js';
import { ChunkWriter } from '../shared/chunk-writer.js';
import { completionId } from '../shared/completion-id.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from '../shared/sanitize-upstream-message.js';
import { toOpenAIUsage } from '../shared/openai-usage.js';
import type { ProviderIdentity } from '../shared/provider-identity.js';
import type { StreamMeter } from '../shared/stream-meter.js';
import { badUpstreamResponse, parseEventObject, streamEndedEarly } from '../shared/upstream-failure.js';
import type { BedrockStreamPayloads } from './bedrock-api.js';
import { bedrockUsage } from './convert-bedrock-usage.js';
import { decodeEventStream, EventStreamFormatError, type EventStreamMessage } from './decode-event-stream.js';
import { mapBedrockStopReason } from './map-bedrock-stop-reason.js';

export interface BedrockStreamOptions {
  identity: ProviderIdentity;
  body: Readable;
  meter: StreamMeter;
  model: string;
  requestId: string;
  upstreamRequestId?: string;
  includeUsage: boolean;
  state: { finishReason: OpenAIFinishReason | null };
}

interface ToolBlock {
  index: number;
  sentArguments: boolean;
}

export async function* bedrockStreamFrames(o: BedrockStreamOptions): AsyncGenerator<string> {
  const writer = new ChunkWriter(completionId(o.upstreamRequestId, o.requestId), o.model, o.meter);
  const tools = new Map<number, ToolBlock>();
  let stopped = false;
  let usageSent = false;
  yield writer.role();

  for await (const message of messages(o)) {
    const messageType = message.headers[':message-type'];
    if (messageType !== 'event') throw streamException(o.identity, message);
    const eventType = message.headers[':event-type'];
    // Every event is parsed, those the chat stream has no use for too: a broken one means the stream cannot be trusted.
    const event = parseEventObject(o.identity, message.payload.toString('utf8'));
    switch (eventType) {
      case 'contentBlockStart': {
        const start = event as BedrockStreamPayloads['contentBlockStart'];
        const toolUse = start.start?.toolUse;
        if (toolUse) {
          const tool: ToolBlock = { index: tools.size, sentArguments: false };
          tools.set(start.contentBlockIndex, tool);
          yield writer.toolCallStart(tool.index, toolUse.toolUseId, toolUse.name);
        }
        break;
      }
      case 'contentBlockDelta': {
        const { delta, contentBlockIndex } = event as BedrockStreamPayloads['contentBlockDelta'];
        if (typeof delta?.text === 'string' && delta.text) yield writer.text(delta.text);
        else if (delta?.toolUse?.input) {
          const tool = tools.get(contentBlockIndex);
          if (!tool) break;
          tool.sentArguments = true;
          yield writer.toolCallArguments(tool.index, delta.toolUse.input);
        }
        break;
      }
      case 'contentBlockStop': {
        // A tool called without arguments streams none; OpenAI clients expect a JSON object string.
        const tool = tools.get((event as BedrockStreamPayloads['contentBlockStop']).contentBlockIndex);
        if (tool && !tool.sentArguments) yield writer.toolCallArguments(tool.index, '{}');
        break;
      }
      case 'messageStop': {
        stopped = true;
        const finish = mapBedrockStopReason((event as BedrockStreamPayloads['messageStop']).stopReason);
        o.state.finishReason = finish;
        yield writer.finished(finish);
        break;
      }
      case 'metadata': {
        // Sent after messageStop, with the usage of the whole call.
        const usage = bedrockUsage((event as BedrockStreamPayloads['metadata']).usage);
        o.meter.report(usage);
        if (o.includeUsage) {
          usageSent = true;
          yield writer.usage(toOpenAIUsage(o.meter.usage()));
        }
        break;
      }
      default:
        // messageStart (the role was sent already) and event types added later.
        break;
    }
  }
  if (!stopped) throw streamEndedEarly(o.identity, 'messageStop');
  if (o.includeUsage && !usageSent) yield writer.usage(toOpenAIUsage(o.meter.usage()));
}

async function* messages(o: BedrockStreamOptions): AsyncGenerator<EventStreamMessage> {
  try {
    yield* decodeEventStream(o.body);
  } catch (err) {
    if (err instanceof EventStreamFormatError) throw badUpstreamResponse(o.identity, `sent a malformed event stream (${err.message}).`);
    throw err;
  }
}

function streamException(identity: ProviderIdentity, message: EventStreamMessage): AgentgwError {
  const type = String(message.headers[':exception-type'] ?? message.headers[':error-code'] ?? 'exception');
  const text = message.headers[':error-message'] ? String(message.headers[':error-message']) : extractUpstreamMessage(message.payload.toString('utf8')).message;
  const detail = sanitizeUpstreamMessage(identity, text);
  return new AgentgwError('upstream_unavailable', `Provider "${identity.name}" failed mid-stream (${type})${detail ? `: ${detail}` : '.'}`);
}
