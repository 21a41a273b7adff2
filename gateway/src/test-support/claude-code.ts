import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type MessageReply, type Reply, type Script, textReply, toolUseReply } from './scripted-anthropic.js';

/**
 * Runs the real Claude Code CLI (`@anthropic-ai/claude-code`'s native binary) headless, offline,
 * against a base URL (agentgw or `startScriptedAnthropic`), in an isolated temporary HOME.
 *
 * What it sends there (recorded in `data-plane/dialects/messages/__fixtures__/`): a `HEAD /` connectivity
 * probe, then `POST /v1/messages?beta=true` with `stream: true` per model turn, `x-api-key: <apiKey>`,
 * `anthropic-version: 2023-06-01`, an `anthropic-beta` list and `x-claude-code-session-id`.
 */

/** The environment that makes Claude Code run headless and offline (nothing but the base URL is contacted). */
export const CLAUDE_CODE_OFFLINE_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
};

/** Tools allowed without a permission prompt by default (`--dangerously-skip-permissions` is refused when running as root). */
export const DEFAULT_ALLOWED_TOOLS = 'Bash,Read,Write,Edit';

/** The path of the native `claude` binary shipped in `@anthropic-ai/claude-code-<platform>-<arch>`. */
export function claudeCodeBinary(): string {
  const require = createRequire(import.meta.url);
  const candidates = [`@anthropic-ai/claude-code-${process.platform}-${process.arch}`, '@anthropic-ai/claude-code-linux-x64'];
  for (const pkg of candidates) {
    try {
      return join(dirname(require.resolve(`${pkg}/package.json`)), process.platform === 'win32' ? 'claude.exe' : 'claude');
    } catch {
      // try the next one
    }
  }
  throw new Error(`no Claude Code native binary installed (looked for ${candidates.join(', ')})`);
}

/** The `--output-format json` result Claude Code prints (the fields tests look at; it has more). */
export interface ClaudeCodeJsonResult {
  type: 'result';
  /** `success` even when `is_error` is true for an API error. */
  subtype: string;
  is_error: boolean;
  /** The HTTP status of the API error that ended the run (429, 403, 400, ...); null on success and after repeated 529s. */
  api_error_status: number | null;
  /** The final text, or the error text (`API Error: Request rejected (429) · <message>`). */
  result: string;
  num_turns: number;
  stop_reason: string | null;
  session_id: string;
  total_cost_usd: number;
  usage: Record<string, unknown>;
  modelUsage: Record<string, unknown>;
  permission_denials: unknown[];
  terminal_reason?: string;
  [key: string]: unknown;
}

export interface RunClaudeCodeOptions {
  /** `http://HOST:PORT`, no `/v1` (Claude Code appends `/v1/messages?beta=true`). */
  baseUrl: string;
  /** Sent as `x-api-key`. */
  apiKey: string;
  prompt: string;
  /** Working directory (default: a new empty temporary directory, removed afterwards). */
  cwd?: string;
  /** HOME (default: a new temporary directory, removed afterwards). */
  home?: string;
  /** Extra environment, on top of PATH, HOME, the base URL, the key and `CLAUDE_CODE_OFFLINE_ENV` (nothing else is inherited). */
  env?: Record<string, string | undefined>;
  /** Extra CLI arguments, appended after `-p <prompt> --output-format json --allowedTools ...`. */
  args?: string[];
  /** `--allowedTools` value (default `DEFAULT_ALLOWED_TOOLS`); null to pass none. */
  allowedTools?: string | null;
  /** `--bare`: a 3-tool, ~4 KB request instead of the full ~76 KB one (default false). */
  bare?: boolean;
  /** `--model`. */
  model?: string;
  /** CLAUDE_CODE_MAX_RETRIES (default 2, so a retried failure ends in seconds; Claude Code's own default is 10); null for Claude Code's own. */
  maxRetries?: number | null;
  /** Killed (SIGKILL) after this long (default 60 s). */
  timeoutMs?: number;
}

export interface ClaudeCodeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** The parsed `--output-format json` result, or null when stdout was not JSON. */
  json: ClaudeCodeJsonResult | null;
}

function parseJson(stdout: string): ClaudeCodeJsonResult | null {
  const text = stdout.trim();
  if (!text) return null;
  try {
    return JSON.parse(text) as ClaudeCodeJsonResult;
  } catch {
    const last = text.split('\n').at(-1) ?? '';
    try {
      return JSON.parse(last) as ClaudeCodeJsonResult;
    } catch {
      return null;
    }
  }
}

/** Runs `claude -p <prompt> --output-format json` to completion against `baseUrl`. */
export async function runClaudeCode(options: RunClaudeCodeOptions): Promise<ClaudeCodeRun> {
  const made: string[] = [];
  const home = options.home ?? (await mkdtemp(join(tmpdir(), 'agentgw-claude-home-')));
  if (!options.home) made.push(home);
  const cwd = options.cwd ?? (await mkdtemp(join(tmpdir(), 'agentgw-claude-cwd-')));
  if (!options.cwd) made.push(cwd);
  const maxRetries = options.maxRetries === undefined ? 2 : options.maxRetries;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TMPDIR: tmpdir(),
    LANG: 'C.UTF-8',
    ...CLAUDE_CODE_OFFLINE_ENV,
    ANTHROPIC_BASE_URL: options.baseUrl.replace(/\/+$/, ''),
    ANTHROPIC_API_KEY: options.apiKey,
    ...(maxRetries === null ? {} : { CLAUDE_CODE_MAX_RETRIES: String(maxRetries) }),
  };
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const allowedTools = options.allowedTools === undefined ? DEFAULT_ALLOWED_TOOLS : options.allowedTools;
  const args = [
    '-p',
    options.prompt,
    '--output-format',
    'json',
    ...(allowedTools ? ['--allowedTools', allowedTools] : []),
    ...(options.bare ? ['--bare'] : []),
    ...(options.model ? ['--model', options.model] : []),
    ...(options.args ?? []),
  ];
  try {
    return await new Promise<ClaudeCodeRun>((resolve, reject) => {
      const child = spawn(claudeCodeBinary(), args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, options.timeoutMs ?? 60_000);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, timedOut, stdout, stderr, json: parseJson(stdout) });
      });
    });
  } finally {
    await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
  }
}

/** The last message of a request carries a tool_result (the turn after a tool ran). */
export function lastTurnHasToolResult(body: any): boolean {
  const last = Array.isArray(body?.messages) ? body.messages.at(-1) : undefined;
  return Array.isArray(last?.content) && last.content.some((b: any) => b?.type === 'tool_result');
}

/** The tool_result blocks of the request's last message. */
export function toolResults(body: any): Array<{ tool_use_id: string; content: unknown; is_error?: boolean }> {
  const last = Array.isArray(body?.messages) ? body.messages.at(-1) : undefined;
  return Array.isArray(last?.content) ? last.content.filter((b: any) => b?.type === 'tool_result') : [];
}

/**
 * A script for `startScriptedAnthropic` driving one tool round trip of Claude Code's agent loop:
 * a request without a tool_result is answered with `tool` (a tool_use), a request carrying
 * one with `finalText`. Requests without tools (none in -p mode so far) get `finalText` too.
 */
export function toolRoundTripScript(tool: { name: string; input: Record<string, unknown>; id?: string }, finalText: string | ((body: any) => string)): Script {
  return (body: any): Reply => {
    const text = typeof finalText === 'function' ? finalText(body) : finalText;
    if (!Array.isArray(body?.tools) || body.tools.length === 0) return textReply(text);
    if (lastTurnHasToolResult(body)) return textReply(text);
    const reply: MessageReply = toolUseReply(tool.name, tool.input, tool.id);
    return reply;
  };
}
