// Anthropic's thinking blocks carried through the other dialects, so that a conversation that goes on with a Claude
// target gives them back as they came (Anthropic checks their signatures, and requires them before a tool call it is
// given back). In Chat Completions they are `thinking_blocks` on the assistant message (LiteLLM's name); in Responses,
// the reasoning item's `encrypted_content`, marked as Anthropic's so that only an Anthropic target ever receives it.
import type { ThinkingBlock } from '../providers/openai-format.js';
import { invalidField, isObject } from './invalid-field.js';

export type { ThinkingBlock };

const PREFIX = 'agentgw.anthropic.thinking.v1:';

/** A reasoning item's encrypted_content holding Anthropic thinking blocks. */
export function encodeThinkingBlocks(blocks: readonly ThinkingBlock[]): string {
  return PREFIX + Buffer.from(JSON.stringify(blocks), 'utf8').toString('base64');
}

/** Whether encrypted_content is Anthropic thinking that agentgw carried (never sent to another family). */
export function isCarriedThinking(encrypted: unknown): boolean {
  return typeof encrypted === 'string' && encrypted.startsWith(PREFIX);
}

/** The thinking blocks of an encrypted_content agentgw made; null when it is not one (OpenAI's own, or anything else). */
export function decodeThinkingBlocks(encrypted: unknown, at: string): ThinkingBlock[] | null {
  if (!isCarriedThinking(encrypted)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from((encrypted as string).slice(PREFIX.length), 'base64').toString('utf8'));
  } catch {
    value = undefined;
  }
  return thinkingBlocks(value, at);
}

/** Checked thinking blocks (a client may send them back): a 400 naming the part that is not one. */
export function thinkingBlocks(value: unknown, at: string): ThinkingBlock[] {
  if (!Array.isArray(value)) throw invalidField(at, `${at} must be the thinking blocks of an earlier Claude answer, as they came.`);
  return value.map((block, i) => {
    if (isObject(block) && block.type === 'thinking' && typeof block.thinking === 'string' && typeof block.signature === 'string') {
      return { type: 'thinking', thinking: block.thinking, signature: block.signature };
    }
    if (isObject(block) && block.type === 'redacted_thinking' && typeof block.data === 'string') return { type: 'redacted_thinking', data: block.data };
    throw invalidField(`${at}[${i}]`, `${at}[${i}] must be {"type": "thinking", "thinking", "signature"} or {"type": "redacted_thinking", "data"}, as Claude gave it.`);
  });
}
