import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Options, type SDKMessage, type SDKResultMessage, query } from '@anthropic-ai/claude-agent-sdk';
import { CLAUDE_CODE_OFFLINE_ENV } from './claude-code.js';

/**
 * Runs one `query()` of the Claude Agent SDK against a base URL (agentgw or `startScriptedAnthropic`).
 *
 * The SDK spawns the Claude Code binary it bundles (`@anthropic-ai/claude-agent-sdk-<platform>-<arch>`,
 * a newer Claude Code than `@anthropic-ai/claude-code`); it is pointed at the base URL through
 * `options.env` (which REPLACES the child's environment: nothing is inherited from this process),
 * with an isolated temporary HOME, no filesystem settings (`settingSources: []`) and no session files
 * (`persistSession: false`). It sends `POST /v1/messages?beta=true` (stream: true), user-agent
 * `claude-cli/<v> (external, sdk-ts, agent-sdk/<v>)`, and no `HEAD /` probe.
 *
 * In-process MCP tools (`createSdkMcpServer` + `tool`) reach the model as `mcp__<server>__<tool>`
 * (deferred behind ToolSearch in the tools list, but callable directly); pass them in `mcpServers`
 * and name them in `allowedTools`.
 */

export interface RunAgentSdkQueryOptions {
  /** `http://HOST:PORT`, no `/v1`. */
  baseUrl: string;
  /** Sent as `x-api-key`. */
  apiKey: string;
  prompt: string;
  /** Working directory of the agent (its Read/Bash tools act there). */
  cwd: string;
  /** HOME (default: a new temporary directory, removed afterwards). */
  home?: string;
  /** Extra environment on top of PATH, HOME, the base URL, the key and the offline switches. */
  env?: Record<string, string | undefined>;
  /** Tools allowed without a permission prompt (default Read, Bash, and every `mcp__<name>__*` of `mcpServers`). */
  allowedTools?: string[];
  mcpServers?: Options['mcpServers'];
  /** Default 6. */
  maxTurns?: number;
  model?: string;
  /** CLAUDE_CODE_MAX_RETRIES (default 2); null for Claude Code's own (10). */
  maxRetries?: number | null;
  /** Aborted after this long (default 60 s). */
  timeoutMs?: number;
  /** Any other `query()` options; they win over the ones above. */
  options?: Partial<Options>;
}

export interface AgentSdkRun {
  /** Every message `query()` yielded, in order (system init, assistant, user tool results, result, ...). */
  messages: SDKMessage[];
  /** The final `result` message, if one came. */
  result: SDKResultMessage | null;
  /** What the Claude Code child wrote to stderr. */
  stderr: string;
  timedOut: boolean;
  /** What `query()` threw, if it did (the run's messages so far are still in `messages`). */
  error: unknown;
}

export async function runAgentSdkQuery(o: RunAgentSdkQueryOptions): Promise<AgentSdkRun> {
  const home = o.home ?? (await mkdtemp(join(tmpdir(), 'agentgw-agent-sdk-home-')));
  const maxRetries = o.maxRetries === undefined ? 2 : o.maxRetries;
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TMPDIR: tmpdir(),
    LANG: 'C.UTF-8',
    ...CLAUDE_CODE_OFFLINE_ENV,
    ANTHROPIC_BASE_URL: o.baseUrl.replace(/\/+$/, ''),
    ANTHROPIC_API_KEY: o.apiKey,
    ...(maxRetries === null ? {} : { CLAUDE_CODE_MAX_RETRIES: String(maxRetries) }),
    ...(o.env ?? {}),
  };
  const mcpNames = Object.keys(o.mcpServers ?? {});
  const abortController = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abortController.abort();
  }, o.timeoutMs ?? 60_000);
  const messages: SDKMessage[] = [];
  let stderr = '';
  let result: SDKResultMessage | null = null;
  let error: unknown = null;
  try {
    const options: Options = {
      cwd: o.cwd,
      env,
      abortController,
      settingSources: [],
      persistSession: false,
      maxTurns: o.maxTurns ?? 6,
      allowedTools: o.allowedTools ?? ['Read', 'Bash', ...mcpNames.map((n) => `mcp__${n}__*`)],
      ...(o.mcpServers ? { mcpServers: o.mcpServers } : {}),
      ...(o.model ? { model: o.model } : {}),
      stderr: (data: string) => {
        stderr += data;
      },
      ...(o.options ?? {}),
    };
    for await (const message of query({ prompt: o.prompt, options })) {
      messages.push(message);
      if (message.type === 'result') result = message;
    }
  } catch (err) {
    error = err;
  } finally {
    clearTimeout(timer);
    if (!o.home) await rm(home, { recursive: true, force: true });
  }
  return { messages, result, stderr, timedOut, error };
}
