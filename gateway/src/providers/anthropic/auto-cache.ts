// Automatic prompt caching for chat requests translated to Anthropic Messages (and, through auto-cache-points.ts,
// Claude on Bedrock Converse). When the client marked no breakpoint of its own and the provider's prompt_caching is
// "auto" (the default), the translated request gets a 5-minute breakpoint on the last tool, the last system block and
// the last block of the newest user turn: an agent's next step repeats that prefix byte for byte, so Anthropic reads
// it from the cache at a tenth of the input price. Native Messages bodies (Claude Code) are never changed.
import type { AnthropicCacheControl, AnthropicRequest, AnthropicRequestBlock } from './anthropic-api.js';

/** `providers.<name>.prompt_caching`: "auto" places breakpoints on translated requests, "off" sends them as the client wrote them. */
export type PromptCaching = 'auto' | 'off';

/**
 * Bytes counted per token when judging whether a prefix reaches Anthropic's minimum. Claude's tokenizer averages about
 * 3.5 characters of English per token and fewer for code; 3 bytes errs toward placing a breakpoint, which is harmless
 * below the minimum (Anthropic then simply caches nothing) where a missing one loses the cache.
 */
export const CACHE_BYTES_PER_TOKEN = 3;

/** Anthropic's shortest cacheable prefix: 2048 tokens for Haiku models, 1024 for Sonnet and Opus. */
export function minCacheableTokens(model: string): number {
  return /haiku/i.test(model) ? 2048 : 1024;
}

/** The prefix length, in bytes, from which a breakpoint is placed for `model`. */
export function minCacheableBytes(model: string): number {
  return minCacheableTokens(model) * CACHE_BYTES_PER_TOKEN;
}

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Roughly what a block weighs in the prompt: its text, its inline data, else its JSON. */
function blockBytes(block: AnthropicRequestBlock): number {
  if (block.type === 'text') return byteLength(block.text);
  if ((block.type === 'image' || block.type === 'document') && block.source.type === 'base64') return block.source.data.length;
  return byteLength(JSON.stringify(block));
}

/**
 * Places the automatic breakpoints on `request` (a translated request carrying none): on the last client tool once the tools
 * reach `minCacheableBytes`, on the system prompt's last block once tools and system do, and on the last block of the
 * newest user turn once the whole prefix up to it does. Three at most, within Anthropic's limit of four.
 */
export function placeAnthropicCacheBreakpoints(model: string, request: AnthropicRequest): void {
  const min = minCacheableBytes(model);
  const marker = (): AnthropicCacheControl => ({ type: 'ephemeral' });
  // Measured only until the minimum is reached: past it every later breakpoint qualifies too.
  let bytes = 0;
  // The last of the client's own tools: a server tool (web search) goes after them and may come and go between requests.
  const tools = request.tools ?? [];
  const lastClientTool = tools.findLastIndex((tool) => 'input_schema' in tool);
  if (lastClientTool >= 0) {
    for (let i = 0; i <= lastClientTool && bytes < min; i++) bytes += byteLength(JSON.stringify(tools[i]));
    if (bytes >= min) tools[lastClientTool]!.cache_control = marker();
  }
  if (request.system !== undefined && request.system.length > 0) {
    if (typeof request.system === 'string') {
      if (bytes < min) bytes += byteLength(request.system);
      if (bytes >= min) request.system = [{ type: 'text', text: request.system, cache_control: marker() }];
    } else {
      for (let i = 0; i < request.system.length && bytes < min; i++) bytes += byteLength(request.system[i]!.text);
      if (bytes >= min) request.system[request.system.length - 1]!.cache_control = marker();
    }
  }
  const newest = request.messages.findLastIndex((m) => m.role === 'user');
  if (newest < 0) return;
  const last = request.messages[newest]!.content.at(-1);
  if (!last) return;
  for (let i = 0; i <= newest && bytes < min; i++) {
    for (const block of request.messages[i]!.content) {
      bytes += blockBytes(block);
      if (bytes >= min) break;
    }
  }
  if (bytes >= min) last.cache_control = marker();
}
