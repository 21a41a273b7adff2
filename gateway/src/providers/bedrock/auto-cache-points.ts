// Automatic prompt caching for chat requests translated to Claude on Bedrock Converse: the cachePoint counterpart of
// anthropic/auto-cache.ts, with the same rules (the client's own breakpoints win; prefixes too short to cache get none).
import { byteLength, minCacheableBytes } from '../anthropic/auto-cache.js';
import type { BedrockContentBlock, BedrockConverseRequest } from './bedrock-api.js';
import { cachePoint } from './convert-to-bedrock-messages.js';

/** Claude model ids on Bedrock: `anthropic.claude-...`, with or without a region prefix (`us.anthropic.claude-...`). */
export const CLAUDE_MODEL = /(^|[.:/])anthropic\.claude|^claude-/;

function blockBytes(block: BedrockContentBlock): number {
  if ('text' in block) return byteLength(block.text);
  if ('image' in block) return block.image.source.bytes.length;
  if ('document' in block) return block.document.source.bytes.length;
  return byteLength(JSON.stringify(block));
}

/**
 * Puts a cachePoint after the last tool once the tools reach the minimum, after the last system block once tools and
 * system do, and after the newest user turn once the whole prefix up to it does. Only Claude models: Converse refuses
 * cachePoint blocks for models without prompt caching.
 */
export function placeBedrockCachePoints(model: string, request: BedrockConverseRequest): void {
  if (!CLAUDE_MODEL.test(model)) return;
  const min = minCacheableBytes(model);
  let bytes = 0;
  const tools = request.toolConfig?.tools ?? [];
  // Measured only until the minimum is reached: past it every later cache point qualifies too.
  if (tools.length > 0) {
    for (let i = 0; i < tools.length && bytes < min; i++) bytes += byteLength(JSON.stringify(tools[i]));
    if (bytes >= min) tools.push(cachePoint());
  }
  if (request.system && request.system.length > 0) {
    for (let i = 0; i < request.system.length && bytes < min; i++) {
      const block = request.system[i]!;
      if ('text' in block) bytes += byteLength(block.text);
    }
    if (bytes >= min) request.system.push(cachePoint());
  }
  const newest = request.messages.findLastIndex((m) => m.role === 'user');
  if (newest < 0 || request.messages[newest]!.content.length === 0) return;
  for (let i = 0; i <= newest && bytes < min; i++) {
    for (const block of request.messages[i]!.content) {
      bytes += blockBytes(block);
      if (bytes >= min) break;
    }
  }
  if (bytes >= min) request.messages[newest]!.content.push(cachePoint());
}
