// What a Messages request holds that only Anthropic can take, found before it is translated for a target of another
// family: signed thinking (its signature is Anthropic's, no other provider can verify or continue it), redacted
// thinking, cache_control hints and server tools (web search, code execution: run by Anthropic). The translation drops
// thinking and cache hints; server tools are dropped here when the alias also has an Anthropic-format target (the
// client wrote the request for it), and refused with a 400 otherwise. The step's trace record lists what went.
import type { MessagesRequest } from '../../../contract/messages-request.js';

export type CleanedItem = 'thinking_signatures' | 'redacted_thinking' | 'cache_control' | 'server_tools';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether a tool definition is one of Anthropic's server tools (typed, not "custom"). */
function isServerTool(tool: unknown): boolean {
  return isObject(tool) && tool.type != null && tool.type !== 'custom';
}

function scanBlocks(blocks: unknown, found: Set<CleanedItem>): void {
  if (!Array.isArray(blocks)) return;
  for (const block of blocks) {
    if (!isObject(block)) continue;
    if (block.cache_control != null) found.add('cache_control');
    if (block.type === 'thinking' && typeof block.signature === 'string' && block.signature) found.add('thinking_signatures');
    else if (block.type === 'redacted_thinking') found.add('redacted_thinking');
    else if (block.type === 'tool_result') scanBlocks(block.content, found);
  }
}

/**
 * The request a translated target is given, and what was taken out of it for that target (in a fixed order; empty when
 * nothing was). `dropServerTools`: server tools are removed (and a tool_choice naming one) rather than refused.
 */
export function cleanForOtherFamily(body: MessagesRequest, dropServerTools: boolean): { body: MessagesRequest; cleaned: CleanedItem[] } {
  const found = new Set<CleanedItem>();
  const raw = body as unknown as Record<string, unknown>;
  scanBlocks(raw.system, found);
  if (Array.isArray(raw.messages)) for (const m of raw.messages) if (isObject(m)) scanBlocks(m.content, found);
  const tools = raw.tools;
  if (Array.isArray(tools)) for (const t of tools) if (isObject(t) && t.cache_control != null) found.add('cache_control');
  let out = body;
  if (dropServerTools && Array.isArray(tools) && tools.some(isServerTool)) {
    found.add('server_tools');
    const removed = new Set(tools.filter(isServerTool).map((t) => (t as Record<string, unknown>).name));
    const kept = tools.filter((t) => !isServerTool(t));
    const copy: Record<string, unknown> = { ...raw, tools: kept };
    if (kept.length === 0) delete copy.tools;
    const choice = raw.tool_choice;
    if (isObject(choice) && ((choice.type === 'tool' && removed.has(choice.name)) || kept.length === 0)) delete copy.tool_choice;
    out = copy as unknown as MessagesRequest;
  }
  const order: CleanedItem[] = ['thinking_signatures', 'redacted_thinking', 'cache_control', 'server_tools'];
  return { body: out, cleaned: order.filter((k) => found.has(k)) };
}
