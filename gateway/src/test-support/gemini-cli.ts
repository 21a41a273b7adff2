import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Runs the real Gemini CLI (`@google/gemini-cli` 0.61.0) headless (`-p ... --yolo`), offline, against a base URL
 * (agentgw's origin: the CLI appends `/v1beta/models/...`), in an isolated temporary HOME whose
 * `~/.gemini/settings.json` selects API-key auth and turns usage statistics and telemetry off.
 *
 * What it sends (recorded in `data-plane/dialects/gemini/__fixtures__/`): `POST /v1beta/models/<router model>:generateContent`
 * (its model router), then `:streamGenerateContent?alt=sse` per turn, with `x-goog-api-key` and the headers of
 * GEMINI_CLI_CUSTOM_HEADERS; no session id of its own.
 */
export interface RunGeminiCliOptions {
  /** `http://HOST:PORT`. */
  baseUrl: string;
  /** Sent as x-goog-api-key. */
  apiKey: string;
  prompt: string;
  /** Working directory (default: a new temporary directory, removed afterwards). */
  cwd?: string;
  /** Headers every request carries (GEMINI_CLI_CUSTOM_HEADERS), e.g. `{'X-Agent-Trace-Id': 'run-1'}`. */
  headers?: Record<string, string>;
  /** Extra CLI arguments after `-p <prompt> --yolo`. */
  args?: string[];
  timeoutMs?: number;
}

export interface GeminiCliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** The path of the CLI's entry script (`bundle/gemini.js`), run with this Node. */
export function geminiCliEntry(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@google/gemini-cli/package.json')), 'bundle', 'gemini.js');
}

export async function runGeminiCli(o: RunGeminiCliOptions): Promise<GeminiCliRun> {
  const home = await mkdtemp(join(tmpdir(), 'agentgw-gemini-home-'));
  const cwd = o.cwd ?? (await mkdtemp(join(tmpdir(), 'agentgw-gemini-work-')));
  await mkdir(join(home, '.gemini'), { recursive: true });
  await writeFile(
    join(home, '.gemini', 'settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false }, telemetry: { enabled: false } }),
  );
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GOOGLE_GEMINI_BASE_URL: o.baseUrl,
    GEMINI_API_KEY: o.apiKey,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    NO_COLOR: '1',
  };
  if (o.headers) env.GEMINI_CLI_CUSTOM_HEADERS = Object.entries(o.headers).map(([k, v]) => `${k}: ${v}`).join(',');
  try {
    return await new Promise<GeminiCliRun>((resolve) => {
      const child = spawn(process.execPath, [geminiCliEntry(), '-p', o.prompt, '--yolo', ...(o.args ?? [])], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, o.timeoutMs ?? 60_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr, timedOut });
      });
    });
  } finally {
    await rm(home, { recursive: true, force: true });
    if (o.cwd === undefined) await rm(cwd, { recursive: true, force: true });
  }
}
