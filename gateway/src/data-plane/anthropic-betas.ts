// `anthropic-beta` turns on features upstream, some of them tools Anthropic runs itself (`mcp_servers` to any URL,
// web fetch, code execution) that no policy or price sees: only the values of `anthropic_betas` pass.
import { z } from 'zod';
import { AgentgwError } from '../contract/index.js';

/**
 * What Claude Code, the Claude Agent SDK and the Anthropic SDK send on their own (none of them turns on a tool Anthropic
 * runs). Recorded in `data-plane/dialects/messages/__fixtures__/` (claude-code-headers.json, agent-sdk-headers.json).
 */
export const DEFAULT_ANTHROPIC_BETAS: readonly string[] = [
  // Claude Code 2.1.197 (every model it asks for) and the Claude Agent SDK 0.3.332
  'claude-code-20250219',
  'context-1m-2025-08-07',
  'interleaved-thinking-2025-05-14',
  'thinking-token-count-2026-05-13',
  'context-management-2025-06-27',
  'prompt-caching-scope-2026-01-05',
  'mid-conversation-system-2026-04-07',
  'effort-2025-11-24',
  // The Claude Agent SDK 0.3.332 only
  'per-turn-control-2026-07-01',
  'mid-conversation-tool-changes-2026-07-01',
  'advanced-tool-use-2025-11-20',
  'thinking-display-updates-2026-08-18',
  // The Anthropic SDK's messages.parse() (structured outputs)
  'structured-outputs-2025-12-15',
];

/** One beta name as Anthropic spells them (`interleaved-thinking-2025-05-14`). */
const BetaName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, { message: 'a beta name is letters, digits, ".", "_" or "-"' });

/** `anthropic_betas` in the server config: the allow-list (it replaces the default list, so repeat the defaults you keep). */
export const AnthropicBetasConfig = z.array(BetaName).max(1000);

/**
 * The `anthropic-beta` header's values (a comma-separated list, repeated headers joined), each checked against the
 * allow-list; returns them joined by commas, as the upstream receives them, or undefined when none was sent.
 */
export function checkedAnthropicBeta(header: string | string[] | undefined, allowed: ReadonlySet<string>): string | undefined {
  if (header === undefined) return undefined;
  const joined = Array.isArray(header) ? header.join(',') : header;
  const values: string[] = [];
  for (const raw of joined.split(',')) {
    const value = raw.trim();
    if (value === '') continue;
    if (!allowed.has(value)) throw betaNotAllowed(value, 'anthropic-beta', 'invalid_header');
    values.push(value);
  }
  return values.length > 0 ? values.join(',') : undefined;
}

/** Anthropic's API versions are dates. */
const ANTHROPIC_VERSION = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The `anthropic-version` header as the upstream receives it, or undefined when none was sent: one date (`2023-06-01`),
 * else a 400 invalid_header (a header passed on as sent is one more place for text the checks do not read).
 */
export function checkedAnthropicVersion(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header === 'string' && ANTHROPIC_VERSION.test(header)) return header;
  throw new AgentgwError('invalid_header', 'anthropic-version must be one API version date, such as 2023-06-01: send it once, as that date.', { param: 'anthropic-version' });
}

/**
 * Bedrock reads betas from the body's `anthropic_beta` too: a request that carries it is held to the same allow-list.
 * A body without the member passes untouched.
 */
export function checkBodyAnthropicBeta(body: Record<string, unknown>, allowed: ReadonlySet<string>): void {
  if (!Object.hasOwn(body, 'anthropic_beta')) return;
  const list = body.anthropic_beta;
  if (!Array.isArray(list) || !list.every((v): v is string => typeof v === 'string')) {
    throw new AgentgwError('validation_failed', 'anthropic_beta must be an array of beta names; send the betas in the anthropic-beta header instead.', { param: 'anthropic_beta' });
  }
  for (const value of list) if (!allowed.has(value)) throw betaNotAllowed(value, 'anthropic_beta', 'validation_failed');
}

function betaNotAllowed(value: string, param: string, code: 'invalid_header' | 'validation_failed'): AgentgwError {
  const name = /^[\x21-\x7e]{1,128}$/.test(value) ? `"${value}"` : 'a value that is no beta name';
  return new AgentgwError(
    code,
    `The Anthropic beta ${name} is not enabled on this gateway: leave it out, or ask an operator to add it to anthropic_betas in the server config.`,
    { param },
  );
}
