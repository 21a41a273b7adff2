import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Runs the real Codex CLI (`@openai/codex`, `codex exec --json`) headless, offline, against a Responses API base URL
 * (agentgw or `startScriptedResponses`), with a custom model provider in an isolated CODEX_HOME and HOME.
 *
 * The config.toml it writes (the lines a user puts in `~/.codex/config.toml` to go through agentgw):
 *
 * ```toml
 * model = "gpt-5.5"
 * model_provider = "agentgw"
 * [model_providers.agentgw]
 * name = "agentgw"
 * base_url = "http://127.0.0.1:PORT/v1"
 * env_key = "AGENTGW_KEY"          # Codex sends `Authorization: Bearer $AGENTGW_KEY`
 * wire_api = "responses"
 * request_max_retries = 1          # tests only: Codex's defaults are 4 and 5
 * stream_max_retries = 1
 * ```
 *
 * plus `[analytics] enabled = false` and `[features] plugins = false`: without them Codex 0.169 opens connections to
 * ab.chatgpt.com (analytics) and github.com / api.github.com / chatgpt.com (plugin marketplace) on every run; and
 * `unbounded_connection_retries = false`: without it a refused connection (gateway down) is retried forever
 * ("Reconnecting... waiting for network"); with it the run fails with exit 1 after `stream_max_retries`.
 *
 * What Codex sends (recorded in `data-plane/dialects/responses/__fixtures__/CODEX.md`): `POST {base_url}/responses`
 * with `stream: true`, `store: false`, the whole conversation in `input` every turn (no `previous_response_id`),
 * `Authorization: Bearer <key>`, `session-id` / `thread-id` / `x-client-request-id` (one uuid per run), `originator: codex_exec`.
 * Nothing else: no `/models`, no compaction endpoint, no WebSocket.
 */

/** Codex's catalog model that sends classic `tools` (10 of them); unknown names work too but print a fallback-metadata warning. */
export const DEFAULT_CODEX_MODEL = 'gpt-5.5';

/** The provider id in config.toml and the environment variable holding the key. */
export const CODEX_PROVIDER_ID = 'agentgw';
export const CODEX_ENV_KEY = 'AGENTGW_KEY';

/**
 * Environment that keeps anything but the base URL unreachable: an unroutable proxy for everything but loopback
 * (Codex honours HTTP(S)_PROXY / NO_PROXY), so a stray connection fails at once instead of leaving the machine.
 */
export const CODEX_OFFLINE_ENV: Readonly<Record<string, string>> = {
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  ALL_PROXY: 'http://127.0.0.1:9',
  https_proxy: 'http://127.0.0.1:9',
  http_proxy: 'http://127.0.0.1:9',
  all_proxy: 'http://127.0.0.1:9',
  NO_PROXY: '127.0.0.1,localhost,::1',
  no_proxy: '127.0.0.1,localhost,::1',
  NO_COLOR: '1',
  RUST_LOG: 'error',
};

/** The `bin/codex.js` launcher of `@openai/codex` (run with node; it execs the native binary of the platform package). */
export function codexLauncher(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@openai/codex/package.json')), 'bin', 'codex.js');
}

/** The version of the installed `@openai/codex`. */
export function codexVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('@openai/codex/package.json') as { version: string }).version;
}

export interface RunCodexOptions {
  /** The Responses base URL including `/v1` (Codex appends `/responses`). */
  baseUrl: string;
  /** Put in `AGENTGW_KEY` (`env_key`), sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  prompt: string;
  /** Working directory (default: a new empty temporary directory, removed afterwards). */
  cwd?: string;
  /** HOME (default: a new temporary directory, removed afterwards); CODEX_HOME is `<home>/.codex`. */
  home?: string;
  /** Extra environment, on top of PATH, HOME, CODEX_HOME, the key and `CODEX_OFFLINE_ENV` (nothing else is inherited); undefined removes one. */
  env?: Record<string, string | undefined>;
  /** Extra `codex exec` arguments, before the prompt (e.g. `['-c', 'model_reasoning_effort="high"']`). */
  args?: string[];
  /** Killed (SIGKILL) after this long (default 90 s). */
  timeoutMs?: number;
  /** `model` in config.toml (default `DEFAULT_CODEX_MODEL`); null writes none (Codex then picks its default, a responses-lite model). */
  model?: string | null;
  /** `request_max_retries` and `stream_max_retries` of the provider (default 1 each, so a failing run ends in seconds); null for Codex's own (4 and 5). */
  maxRetries?: number | null;
  /** Extra TOML lines for the provider table (e.g. `stream_idle_timeout_ms = 5000`, `http_headers = { x-trace = "t1" }`). */
  providerToml?: string;
  /** Extra top-level TOML (placed before any table; e.g. `model_auto_compact_token_limit = 2000`). */
  configToml?: string;
  /** Sandbox: `bypass` (default: `--dangerously-bypass-approvals-and-sandbox`, works as root, no prompts) or a `-s` mode. */
  sandbox?: 'bypass' | 'read-only' | 'workspace-write' | 'danger-full-access';
  /** Keep the temporary HOME (its `.codex/sessions/` holds the rollout) and return its path (default false). */
  keepHome?: boolean;
}

export interface CodexRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** The `--json` lines: `thread.started`, `turn.started`, `item.started|updated|completed`, `turn.completed|failed`, `error`. */
  events: unknown[];
  /** `thread_id` of `thread.started` (also the `session-id` header and `prompt_cache_key` Codex sent). */
  threadId: string | null;
  /** Text of the last `agent_message` item. */
  lastMessage: string | null;
  /** Message of `turn.failed` (or of the last `error` event), when the run failed. */
  error: string | null;
  /** The HOME used, when `keepHome` (or when given). */
  home: string | null;
  /** The working directory used, when given. */
  cwd: string | null;
}

/** TOML basic string. */
function tomlString(s: string): string {
  return JSON.stringify(s);
}

/** The config.toml runCodex writes. */
export function codexConfigToml(options: { baseUrl: string; model?: string | null; maxRetries?: number | null; providerToml?: string; configToml?: string }): string {
  const model = options.model === undefined ? DEFAULT_CODEX_MODEL : options.model;
  const retries = options.maxRetries === undefined ? 1 : options.maxRetries;
  return [
    ...(model ? [`model = ${tomlString(model)}`] : []),
    `model_provider = ${tomlString(CODEX_PROVIDER_ID)}`,
    'check_for_update_on_startup = false',
    ...(options.configToml ? [options.configToml.trim()] : []),
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    'unbounded_connection_retries = false',
    '',
    `[model_providers.${CODEX_PROVIDER_ID}]`,
    'name = "agentgw"',
    `base_url = ${tomlString(options.baseUrl.replace(/\/+$/, ''))}`,
    `env_key = ${tomlString(CODEX_ENV_KEY)}`,
    'wire_api = "responses"',
    ...(retries === null ? [] : [`request_max_retries = ${retries}`, `stream_max_retries = ${retries}`]),
    ...(options.providerToml ? [options.providerToml.trim()] : []),
    '',
  ].join('\n');
}

function parseEvents(stdout: string): unknown[] {
  const events: unknown[] = [];
  for (const line of stdout.split('\n')) {
    const text = line.trim();
    if (!text.startsWith('{')) continue;
    try {
      events.push(JSON.parse(text));
    } catch {
      // not an event line
    }
  }
  return events;
}

/** Runs `codex exec --json` to completion against `baseUrl`. */
export async function runCodex(options: RunCodexOptions): Promise<CodexRun> {
  const made: string[] = [];
  const home = options.home ?? (await mkdtemp(join(tmpdir(), 'agentgw-codex-home-')));
  if (!options.home && !options.keepHome) made.push(home);
  const cwd = options.cwd ?? (await mkdtemp(join(tmpdir(), 'agentgw-codex-cwd-')));
  if (!options.cwd) made.push(cwd);
  const codexHome = join(home, '.codex');
  await mkdir(codexHome, { recursive: true });
  await writeFile(join(codexHome, 'config.toml'), codexConfigToml(options));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    CODEX_HOME: codexHome,
    TMPDIR: tmpdir(),
    LANG: 'C.UTF-8',
    SHELL: '/bin/bash',
    ...CODEX_OFFLINE_ENV,
    [CODEX_ENV_KEY]: options.apiKey,
  };
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const sandbox = options.sandbox ?? 'bypass';
  const args = [
    codexLauncher(),
    'exec',
    '--json',
    '--skip-git-repo-check',
    '--color',
    'never',
    ...(sandbox === 'bypass' ? ['--dangerously-bypass-approvals-and-sandbox'] : ['-s', sandbox]),
    ...(options.args ?? []),
    '--',
    options.prompt,
  ];
  try {
    return await new Promise<CodexRun>((resolve, reject) => {
      // Its own process group: on Node < 22.15 bin/codex.js spawns the native binary as a child instead of exec'ing it,
      // so a timeout kills the whole group, not just the launcher.
      const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      const killAll = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const timer = setTimeout(() => {
        timedOut = true;
        killAll();
      }, options.timeoutMs ?? 90_000);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        const events = parseEvents(stdout);
        const ev = events as Array<{ type?: string; thread_id?: string; message?: string; error?: { message?: string }; item?: { type?: string; text?: string } }>;
        const threadId = ev.find((e) => e.type === 'thread.started')?.thread_id ?? null;
        const lastMessage = ev.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').at(-1)?.item?.text ?? null;
        const failed = ev.filter((e) => e.type === 'turn.failed').at(-1)?.error?.message;
        const lastError = ev.filter((e) => e.type === 'error').at(-1)?.message;
        resolve({
          code,
          signal,
          timedOut,
          stdout,
          stderr,
          events,
          threadId,
          lastMessage,
          error: failed ?? (code === 0 ? null : (lastError ?? null)),
          home: options.home || options.keepHome ? home : null,
          cwd: options.cwd ?? null,
        });
      });
    });
  } finally {
    await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
  }
}

/** The `command_execution` items Codex ran (command line, output, exit code), from the `--json` events. */
export function codexCommands(events: unknown[]): Array<{ command: string; aggregated_output: string; exit_code: number | null; status: string }> {
  return (events as Array<{ type?: string; item?: any }>).filter((e) => e.type === 'item.completed' && e.item?.type === 'command_execution').map((e) => e.item);
}

/** The `exec_command` call Codex's shell tool takes (Codex 0.169, `unified_exec`): `{ cmd, workdir?, yield_time_ms?, ... }`. */
export function execCommandArgs(cmd: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { cmd, ...extra };
}
