// Anthropic's SSE events (message_start, content_block_*, message_delta, message_stop) -> OpenAI chat.completion.chunk frames.
import type { Readable } from 'node:stream';
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIFinishReason } from '../openai-format.js';
import { ChunkWriter } from '../shared/chunk-writer.js';
import { completionId } from '../shared/completion-id.js';
import { toOpenAIUsage } from '../shared/openai-usage.js';
import type { ProviderIdentity } from '../shared/provider-identity.js';
import { sanitizeUpstreamMessage } from '../shared/sanitize-upstream-message.js';
import { sseEvents } from '../shared/sse-events.js';
import { parseEventObject, streamEndedEarly } from '../shared/upstream-failure.js';
import type { StreamMeter } from '../shared/stream-meter.js';
import type { AnthropicStreamEvent, AnthropicThinkingBlock, AnthropicUsage } from './anthropic-api.js';
import { anthropicPromptUsage, mergeAnthropicPromptCounts } from './convert-anthropic-usage.js';
import { isServerToolBlock, textAfterServerTool } from './convert-anthropic-response.js';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.js';

export interface AnthropicStreamOptions {
  identity: ProviderIdentity;
  body: Readable;
  meter: StreamMeter;
  model: string;
  requestId: string;
  includeUsage: boolean;
  state: { finishReason: OpenAIFinishReason | null };
}

interface ToolBlock {
  index: number;
  sentArguments: boolean;
}

export async function* anthropicStreamFrames(o: AnthropicStreamOptions): AsyncGenerator<string> {
  let writer: ChunkWriter | undefined;
  const tools = new Map<number, ToolBlock>();
  // Signatures of the thinking blocks being streamed, by block index.
  const thinking = new Map<number, string>();
  // The prompt counts as last reported (input, cache reads, cache writes), and the completion tokens.
  let promptCounts: AnthropicUsage = {};
  let completion = 0;
  let stopped = false;
  // The text streamed so far ends with this (for the paragraph break after a server tool: web search, ...).
  let lastText = '';
  let afterServerTool = false;
  const open = (id?: string, model?: string) => (writer ??= new ChunkWriter(completionId(id, o.requestId), model ?? o.model, o.meter));
  const text = (piece: string): string => {
    if (!piece) return open().text(piece);
    const out = afterServerTool ? textAfterServerTool(lastText, piece) + piece : piece;
    afterServerTool = false;
    lastText = out;
    return open().text(out);
  };

  for await (const sse of sseEvents(o.body, o.identity)) {
    const event = parseEventObject<AnthropicStreamEvent>(o.identity, sse.data);
    switch (event.type) {
      case 'message_start': {
        promptCounts = mergeAnthropicPromptCounts({}, event.message?.usage ?? {});
        o.meter.report(anthropicPromptUsage(promptCounts));
        yield open(event.message?.id, event.message?.model).role();
        break;
      }
      case 'content_block_start': {
        const block = event.content_block;
        if (!block) break;
        if (block.type === 'tool_use') {
          const tool: ToolBlock = { index: tools.size, sentArguments: false };
          tools.set(event.index, tool);
          yield open().toolCallStart(tool.index, block.id, block.name);
        } else if (block.type === 'thinking') {
          const b = block as AnthropicThinkingBlock;
          thinking.set(event.index, b.signature ?? '');
          if (b.thinking) yield open().reasoning(b.thinking);
        } else if (block.type === 'redacted_thinking') {
          yield open().thinkingBlock({ type: 'redacted_thinking', data: (block as AnthropicThinkingBlock).data ?? '' });
        } else if (block.type === 'text' && block.text) {
          yield text(block.text);
        } else if (isServerToolBlock(block.type)) {
          // Anthropic runs it (web search, ...): its call, input and results are not for the client; citations_delta neither.
          afterServerTool = true;
        }
        break;
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (!delta) break;
        if (delta.type === 'text_delta') yield text(delta.text);
        else if (delta.type === 'thinking_delta') {
          if (delta.thinking) yield open().reasoning(delta.thinking);
        } else if (delta.type === 'signature_delta') {
          if (thinking.has(event.index)) thinking.set(event.index, thinking.get(event.index)! + delta.signature);
        }
        else if (delta.type === 'input_json_delta' && delta.partial_json) {
          const tool = tools.get(event.index);
          if (!tool) break;
          tool.sentArguments = true;
          yield open().toolCallArguments(tool.index, delta.partial_json);
        }
        break;
      }
      case 'content_block_stop': {
        // A tool called without arguments streams none; OpenAI clients expect a JSON object string.
        const tool = tools.get(event.index);
        if (tool && !tool.sentArguments) yield open().toolCallArguments(tool.index, '{}');
        const signature = thinking.get(event.index);
        if (signature !== undefined) {
          thinking.delete(event.index);
          yield open().thinkingBlock({ type: 'thinking', signature });
        }
        break;
      }
      case 'message_delta': {
        // message_delta usage is cumulative; newer API versions repeat the input and cache counts there too.
        const usage = event.usage ?? {};
        promptCounts = mergeAnthropicPromptCounts(promptCounts, usage);
        completion = usage.output_tokens ?? completion;
        o.meter.report({ prompt_tokens: 0, ...anthropicPromptUsage(promptCounts), completion_tokens: completion });
        const finish = mapAnthropicStopReason(event.delta?.stop_reason ?? null);
        o.state.finishReason = finish;
        yield open().finished(finish);
        break;
      }
      case 'message_stop': {
        stopped = true;
        if (o.includeUsage) {
          const p = anthropicPromptUsage(promptCounts);
          const usage = { prompt_tokens: p.prompt_tokens ?? 0, completion_tokens: completion, estimated: false, ...(p.cached_prompt_tokens !== undefined ? { cached_prompt_tokens: p.cached_prompt_tokens } : {}) };
          yield open().usage(toOpenAIUsage(usage));
        }
        break;
      }
      case 'error': {
        const detail = sanitizeUpstreamMessage(o.identity, event.error?.message ?? '');
        throw new AgentgwError('upstream_unavailable', `Provider "${o.identity.name}" failed mid-stream (${event.error?.type ?? 'error'})${detail ? `: ${detail}` : '.'}`);
      }
      default:
        // ping and event types added later carry nothing a chat.completion.chunk can say.
        break;
    }
  }
  if (!stopped) throw streamEndedEarly(o.identity, 'message_stop');
}
