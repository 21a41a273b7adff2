// A Gemini GenerateContentResponse -> an OpenAI chat.completion and its usage.
import type { OpenAIChatCompletion, OpenAIToolCall } from '../openai-format.js';
import { completionId, nowSeconds } from '../shared/completion-id.js';
import { toOpenAIUsage } from '../shared/openai-usage.js';
import type { Usage } from '../spec.js';
import type { GeminiPart, GeminiResponse } from './gemini-api.js';
import { geminiUsage } from './convert-gemini-usage.js';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.js';

/** Gemini call ids are optional; OpenAI clients need one to answer a call. */
export function geminiToolCallId(requestId: string, id: string | undefined, choice: number, index: number): string {
  return id ?? `call_${requestId}_${choice}_${index}`;
}

/** A call's thoughtSignature as Google's OpenAI-compatible API carries it, for a later turn to give back to Gemini. */
export function signatureOf(part: { thoughtSignature?: string }): { extra_content?: { google: { thought_signature: string } } } {
  return part.thoughtSignature ? { extra_content: { google: { thought_signature: part.thoughtSignature } } } : {};
}

export function convertGeminiResponse(response: GeminiResponse, model: string, requestId: string): { body: OpenAIChatCompletion; usage: Usage } {
  const candidates = response.candidates ?? [];
  const choices: OpenAIChatCompletion['choices'] = candidates.map((candidate, i) => {
    let text = '';
    // Gemini's thought summaries (asked for with includeThoughts) become reasoning_content, as Claude's thinking does.
    let reasoning = '';
    const toolCalls: OpenAIToolCall[] = [];
    for (const part of candidate.content?.parts ?? ([] as GeminiPart[])) {
      if ('text' in part && part.thought) reasoning += part.text;
      else if ('text' in part) text += part.text;
      else if ('functionCall' in part) {
        toolCalls.push({
          id: geminiToolCallId(requestId, part.functionCall.id, i, toolCalls.length),
          type: 'function',
          function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
          ...signatureOf(part),
        });
      }
    }
    const message: OpenAIChatCompletion['choices'][number]['message'] = {
      role: 'assistant',
      content: text === '' && toolCalls.length > 0 ? null : text,
    };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (reasoning) message.reasoning_content = reasoning;
    return { index: candidate.index ?? i, message, finish_reason: mapGeminiFinishReason(candidate.finishReason, toolCalls.length > 0), logprobs: null };
  });
  if (choices.length === 0) {
    // A blocked prompt gets no candidates, only promptFeedback.blockReason.
    choices.push({ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter', logprobs: null });
  }
  const reported = geminiUsage(response.usageMetadata);
  const usage: Usage = {
    prompt_tokens: reported.prompt_tokens ?? 0,
    completion_tokens: reported.completion_tokens ?? 0,
    estimated: false,
  };
  if (reported.cached_prompt_tokens !== undefined) usage.cached_prompt_tokens = reported.cached_prompt_tokens;
  const openaiUsage = toOpenAIUsage(usage);
  if (response.usageMetadata?.thoughtsTokenCount) openaiUsage.completion_tokens_details = { reasoning_tokens: response.usageMetadata.thoughtsTokenCount };
  return {
    body: {
      id: completionId(response.responseId, requestId),
      object: 'chat.completion',
      created: nowSeconds(),
      model: response.modelVersion ?? model,
      choices,
      usage: openaiUsage,
    },
    usage,
  };
}
