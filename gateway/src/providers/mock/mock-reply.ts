// What the mock answers: a tool call when tools are offered, JSON when JSON is asked for, else an echo of the prompt.
import { truncateToTokens } from '../../tokenizer/o200k.js';
import type { OpenAIChatRequest, OpenAIFinishReason, OpenAIToolCall } from '../openai-format.js';
import { contentText, maxOutputTokens } from '../shared/message-content.js';
import { fnv1a } from './mock-hash.js';
import { mockValueFromSchema } from './mock-value-from-schema.js';

const QUOTE_LIMIT = 400;

export interface MockReply {
  content: string | null;
  toolCalls: OpenAIToolCall[];
  finishReason: OpenAIFinishReason;
}

export function mockReply(body: OpenAIChatRequest): MockReply {
  const last = body.messages[body.messages.length - 1];
  const lastUser = [...body.messages].reverse().find((m) => m.role === 'user');
  const prompt = contentText(lastUser?.content).slice(0, QUOTE_LIMIT);

  const tool = pickTool(body);
  if (tool && last?.role !== 'tool') {
    const args = JSON.stringify(mockValueFromSchema(tool.function.parameters ?? { type: 'object' }, prompt));
    const id = `call_mock_${fnv1a(tool.function.name + prompt).toString(16)}`;
    return { content: null, toolCalls: [{ id, type: 'function', function: { name: tool.function.name, arguments: args } }], finishReason: 'tool_calls' };
  }

  let text: string;
  if (last?.role === 'tool') text = `The tool returned: ${contentText(last.content).slice(0, QUOTE_LIMIT)}`;
  else if (body.response_format?.type === 'json_schema') text = JSON.stringify(mockValueFromSchema(body.response_format.json_schema.schema ?? { type: 'object' }, prompt));
  else if (body.response_format?.type === 'json_object') text = JSON.stringify({ reply: prompt });
  else text = `This is a mock reply. You said: "${prompt}"`;

  // max_tokens cuts the reply where a real model would stop.
  const max = maxOutputTokens(body);
  if (max !== undefined) {
    const cut = truncateToTokens(text, max);
    if (cut !== null) return { content: cut, toolCalls: [], finishReason: 'length' };
  }
  return { content: text, toolCalls: [], finishReason: 'stop' };
}

function pickTool(body: OpenAIChatRequest) {
  if (!body.tools?.length || body.tool_choice === 'none') return undefined;
  const choice = body.tool_choice;
  if (typeof choice === 'object') return body.tools.find((t) => t.function.name === choice.function.name) ?? body.tools[0];
  return body.tools[0];
}

/** The reply cut into a few pieces at word boundaries, as a stream would deliver it. */
export function splitIntoChunks(text: string, pieces = 4): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [text];
  const size = Math.max(1, Math.ceil(words.length / pieces));
  const out: string[] = [];
  for (let i = 0; i < words.length; i += size) out.push(words.slice(i, i + size).join(''));
  return out;
}
