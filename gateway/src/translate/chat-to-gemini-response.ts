// An OpenAI chat completion -> a Gemini GenerateContentResponse, for an answer from an upstream that does not speak Gemini.
import type { GeminiPart } from '../providers/gemini/gemini-api.js';
import type { OpenAIChatCompletion } from '../providers/openai-format.js';
import type { Usage } from '../providers/spec.js';
import { encodeThinkingBlocks } from './carried-thinking.js';

/** Chat's finish_reason -> Gemini's finishReason (a turn with function calls ends with STOP, as Gemini's do). */
export function geminiFinishReason(finish: string | null | undefined): string {
  switch (finish) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    default:
      return 'STOP';
  }
}

/** The usage as Gemini reports it: thoughts apart from the answer's tokens, cached tokens inside the prompt's. */
export function geminiUsageMetadata(usage: Usage): Record<string, number> {
  const thoughts = usage.reasoning_tokens ?? 0;
  const candidates = Math.max(0, usage.completion_tokens - thoughts);
  const out: Record<string, number> = { promptTokenCount: usage.prompt_tokens, candidatesTokenCount: candidates, totalTokenCount: usage.prompt_tokens + usage.completion_tokens };
  if (usage.cached_prompt_tokens) out.cachedContentTokenCount = usage.cached_prompt_tokens;
  if (thoughts > 0) out.thoughtsTokenCount = thoughts;
  return out;
}

/** A call's arguments as an object (Gemini's args); text that is not a JSON object is kept under `input`. */
export function geminiArgs(args: string | undefined): Record<string, unknown> {
  if (!args) return {};
  try {
    const v = JSON.parse(args) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { input: v };
  } catch {
    return { input: args };
  }
}

/** `thoughts`: the client asked for thought parts (includeThoughts), which the reasoning_content of the answer becomes. */
export function chatCompletionToGemini(c: OpenAIChatCompletion, opts: { model: string; usage: Usage; responseId: string; thoughts?: boolean }): Record<string, unknown> {
  const candidates = c.choices.map((choice) => {
    const parts: GeminiPart[] = [];
    const m = choice.message;
    if (opts.thoughts && m.reasoning_content) parts.push({ text: m.reasoning_content, thought: true });
    const text = typeof m.content === 'string' ? m.content : '';
    if (text) parts.push({ text });
    if (m.refusal) parts.push({ text: m.refusal });
    (m.tool_calls ?? []).forEach((call, i) => {
      const part: GeminiPart = { functionCall: { id: call.id, name: call.function.name, args: geminiArgs(call.function.arguments) } };
      // Claude's signed thinking rides on the first call as Gemini's signatures do, for a Claude target to get it back.
      if (i === 0 && m.thinking_blocks?.length) part.thoughtSignature = encodeThinkingBlocks(m.thinking_blocks);
      parts.push(part);
    });
    return { content: { role: 'model', parts }, finishReason: geminiFinishReason(choice.finish_reason), index: choice.index };
  });
  return { candidates, usageMetadata: geminiUsageMetadata(opts.usage), modelVersion: opts.model, responseId: opts.responseId };
}
