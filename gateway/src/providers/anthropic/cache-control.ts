// Prompt-cache breakpoints as OpenAI-format clients mark them (LiteLLM's convention): a `cache_control` object, such as
// {"type": "ephemeral"} or {"type": "ephemeral", "ttl": "1h"}, on a content part, on a whole message or on a tool.
// Read and checked here; the Anthropic and Bedrock converters place them. Nothing else of the client's object is sent.
import { AgentgwError } from '../../contract/errors.js';
import type { AnthropicCacheControl } from './anthropic-api.js';

/** Anthropic's limit of cache_control blocks per request (tools, system and messages together). */
export const MAX_CACHE_BREAKPOINTS = 4;

const SHAPE = 'must be {"type": "ephemeral"}, optionally with "ttl": "5m" or "1h"';

/** The checked `cache_control` of a part, message or tool (`param` names it); undefined when absent or null. */
export function cacheControlOf(holder: object, param: string): AnthropicCacheControl | undefined {
  const value = (holder as { cache_control?: unknown }).cache_control;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new AgentgwError('validation_failed', `${param} ${SHAPE}.`, { param });
  const { type, ttl } = value as { type?: unknown; ttl?: unknown };
  if (type !== 'ephemeral') {
    throw new AgentgwError('validation_failed', `${param} ${SHAPE}; its type is ${describe(type)}.`, { param });
  }
  if (ttl === undefined || ttl === null) return { type: 'ephemeral' };
  if (ttl !== '5m' && ttl !== '1h') throw new AgentgwError('validation_failed', `${param} ${SHAPE}; its ttl is ${describe(ttl)}.`, { param });
  return { type: 'ephemeral', ttl };
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Whether some part of a content array carries a cache_control (checked later, where it is placed). */
export function hasMarkedPart(content: unknown): boolean {
  return Array.isArray(content) && content.some((part) => typeof part === 'object' && part !== null && (part as { cache_control?: unknown }).cache_control != null);
}

/** A breakpoint on something the provider does not receive (an empty text, a part this role drops, an empty message). */
export function breakpointWithoutContent(provider: string, param: string): AgentgwError {
  return new AgentgwError(
    'validation_failed',
    `${param} marks content that provider "${provider}" does not receive (empty text, or a part this message role does not carry); put the cache_control on a non-empty part or remove it.`,
    { param },
  );
}

/** A cache breakpoint the client marked: where (its cache_control's param) and for how long (absent: 5 minutes). */
export interface Breakpoint {
  param: string;
  ttl: '5m' | '1h' | undefined;
}

/** Anthropic answers 400 past 4 breakpoints: say so first, and which ones to drop. `marks` in Anthropic's order: tools, system, messages. */
export function checkBreakpointCount(provider: string, marks: readonly Breakpoint[]): void {
  if (marks.length <= MAX_CACHE_BREAKPOINTS) return;
  const params = marks.map((m) => m.param);
  const shown = params.length > 10 ? `${params.slice(0, 10).join(', ')}, ...` : params.join(', ');
  throw new AgentgwError(
    'validation_failed',
    `Provider "${provider}" (Anthropic) takes at most ${MAX_CACHE_BREAKPOINTS} cache_control breakpoints per request, and this request has ${params.length} ` +
      `(in the order tools, system, messages: ${shown}); remove ${params.length - MAX_CACHE_BREAKPOINTS} of them, keeping those that end the prefixes worth caching.`,
    { param: params[MAX_CACHE_BREAKPOINTS] },
  );
}

/**
 * Anthropic and Bedrock refuse a 1-hour breakpoint after a 5-minute one (the default) in the order tools, system,
 * messages: say which two clash before sending.
 */
export function checkTtlOrder(provider: string, marks: readonly Breakpoint[]): void {
  let short: Breakpoint | undefined;
  for (const m of marks) {
    if (m.ttl !== '1h') {
      short ??= m;
    } else if (short) {
      throw new AgentgwError(
        'validation_failed',
        `${m.param} asks for a 1-hour cache after ${short.param}, a 5-minute one (${short.ttl === undefined ? 'the default' : '"5m"'}): provider "${provider}" ` +
          'takes the 1-hour breakpoints first, in the order tools, system, messages. Give the earlier one "ttl": "1h" as well, or this one 5 minutes.',
        { param: m.param },
      );
    }
  }
}
