// `anthropic-beta` values pass only from `anthropic_betas`: the betas the recorded clients send pass by default, one
// that turns on a tool Anthropic runs itself (mcp_servers, web fetch, code execution) is a 400 naming it.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { isAgentgwError } from '../contract/index.js';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply } from '../test-support/scripted-anthropic.js';
import { DEFAULT_ANTHROPIC_BETAS, checkBodyAnthropicBeta, checkedAnthropicBeta } from './anthropic-betas.js';

const FIXTURES = new URL('./dialects/messages/__fixtures__/', import.meta.url);

/** Every `anthropic-beta` value of the recorded requests of a fixture (`claude-code-headers.json`, `agent-sdk-headers.json`). */
function recordedBetaHeaders(file: string): string[] {
  const recorded = JSON.parse(readFileSync(new URL(file, FIXTURES), 'utf8')) as { requests: Array<{ headers?: Record<string, string> }> };
  return recorded.requests.map((r) => r.headers?.['anthropic-beta']).filter((v): v is string => v !== undefined);
}

const CLAUDE_CODE_BETAS = recordedBetaHeaders('claude-code-headers.json');
const AGENT_SDK_BETAS = recordedBetaHeaders('agent-sdk-headers.json');

function refusal(f: () => unknown): { code: string; param: string | null; message: string } {
  try {
    f();
  } catch (e) {
    if (isAgentgwError(e)) return { code: e.code, param: e.param, message: e.message };
    throw e;
  }
  throw new Error('not refused');
}

describe('the default anthropic_betas', () => {
  const allowed = new Set(DEFAULT_ANTHROPIC_BETAS);

  test('hold every beta the recorded Claude Code and Claude Agent SDK requests send', () => {
    expect(CLAUDE_CODE_BETAS.length).toBeGreaterThan(0);
    expect(AGENT_SDK_BETAS.length).toBe(3);
    for (const header of [...CLAUDE_CODE_BETAS, ...AGENT_SDK_BETAS]) {
      expect(checkedAnthropicBeta(header, allowed)).toBe(header);
    }
  });

  test.each([
    'mcp-client-2025-04-04',
    'mcp-client-2025-11-20',
    'web-fetch-2025-09-10',
    'code-execution-2025-05-22',
    'code-execution-2025-08-25',
    'skills-2025-10-02',
    'files-api-2025-04-14',
    'computer-use-2025-01-24',
    'advisor-tool-2026-03-01',
    'fast-mode-2026-02-01',
    'server-side-fallback-2026-06-01',
  ])('leave out %s (a tool or a price the gateway does not see)', (beta) => {
    expect(allowed.has(beta)).toBe(false);
    expect(refusal(() => checkedAnthropicBeta(`claude-code-20250219,${beta}`, allowed))).toEqual({
      code: 'invalid_header',
      param: 'anthropic-beta',
      message: `The Anthropic beta "${beta}" is not enabled on this gateway: leave it out, or ask an operator to add it to anthropic_betas in the server config.`,
    });
  });

  test('each value of the list is read: spaces and empty entries around commas, repeated headers', () => {
    expect(checkedAnthropicBeta(' interleaved-thinking-2025-05-14 , ,context-management-2025-06-27,', allowed)).toBe(
      'interleaved-thinking-2025-05-14,context-management-2025-06-27',
    );
    expect(checkedAnthropicBeta(['interleaved-thinking-2025-05-14', 'effort-2025-11-24'], allowed)).toBe('interleaved-thinking-2025-05-14,effort-2025-11-24');
    expect(checkedAnthropicBeta(',, ,', allowed)).toBeUndefined();
    expect(checkedAnthropicBeta(undefined, allowed)).toBeUndefined();
    // Separated otherwise, two betas are one value no allow-list holds.
    expect(refusal(() => checkedAnthropicBeta('interleaved-thinking-2025-05-14;mcp-client-2025-04-04', allowed)).code).toBe('invalid_header');
    expect(refusal(() => checkedAnthropicBeta('interleaved-thinking-2025-05-14 mcp-client-2025-04-04', allowed)).code).toBe('invalid_header');
    expect(refusal(() => checkedAnthropicBeta('Interleaved-Thinking-2025-05-14', allowed)).code).toBe('invalid_header');
    expect(refusal(() => checkedAnthropicBeta('x\u0001y', allowed)).message).toContain('a value that is no beta name');
  });

  test("Bedrock's body member anthropic_beta is held to the same list", () => {
    expect(() => checkBodyAnthropicBeta({ model: 'm' }, allowed)).not.toThrow();
    expect(() => checkBodyAnthropicBeta({ anthropic_beta: ['interleaved-thinking-2025-05-14'] }, allowed)).not.toThrow();
    expect(refusal(() => checkBodyAnthropicBeta({ anthropic_beta: ['mcp-client-2025-04-04'] }, allowed))).toMatchObject({ code: 'validation_failed', param: 'anthropic_beta' });
    expect(refusal(() => checkBodyAnthropicBeta({ anthropic_beta: 'mcp-client-2025-04-04' }, allowed))).toMatchObject({ code: 'validation_failed', param: 'anthropic_beta' });
  });

  test('are listed in the README', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const listed = readme.slice(readme.indexOf('### Model ids, Anthropic betas and web search'), readme.indexOf('### PII rules'));
    for (const beta of DEFAULT_ANTHROPIC_BETAS) expect(listed).toContain(`\`${beta}\``);
  });

  test('the server config takes a list of beta names, which replaces the default', () => {
    expect(loadConfig({ env: {} }).anthropic_betas).toEqual(DEFAULT_ANTHROPIC_BETAS);
    expect(loadConfig({ env: {}, overrides: { anthropic_betas: ['web-fetch-2025-09-10'] } }).anthropic_betas).toEqual(['web-fetch-2025-09-10']);
    expect(() => loadConfig({ env: {}, overrides: { anthropic_betas: ['a,b'] } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, overrides: { anthropic_betas: 'claude-code-20250219' } })).toThrow(ConfigError);
  });
});

describe('anthropic-beta through the gateway', () => {
  let upstream: ScriptedAnthropic;
  let gw: TestGateway;
  let custom: TestGateway;
  let key: string;
  let customKey: string;

  beforeAll(async () => {
    upstream = await startScriptedAnthropic(() => textReply('fine'));
    const providers = { anthropic: { type: 'anthropic', base_url: upstream.url, api_key: 'sk-ant-upstream' } };
    gw = await startTestGateway({ config: { providers } });
    custom = await startTestGateway({ config: { providers, anthropic_betas: ['web-fetch-2025-09-10'] } });
    for (const [g, set] of [
      [gw, (k: string) => (key = k)],
      [custom, (k: string) => (customKey = k)],
    ] as const) {
      const admin = adminClient(g.adminUrl, g.adminKey);
      await admin.tenant('acme');
      set((await admin.agent('acme', 'bot')).api_key);
    }
  });
  afterAll(async () => {
    await gw?.close();
    await custom?.close();
    await upstream?.close();
  });

  async function post(g: TestGateway, k: string, path: string, beta: string | undefined, extra: Record<string, unknown> = {}) {
    const res = await fetch(`${g.url}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': k, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...(beta !== undefined ? { 'anthropic-beta': beta } : {}) },
      body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], ...extra }),
    });
    return { status: res.status, json: (await res.json()) as any };
  }

  test.each(['/v1/messages?beta=true', '/v1/messages/count_tokens?beta=true'])('%s: a beta that turns on mcp_servers is a 400 invalid_header naming it; nothing goes upstream', async (path) => {
    const before = upstream.requests.length;
    const r = await post(gw, key, path, 'claude-code-20250219,mcp-client-2025-04-04', path.includes('count') ? { max_tokens: undefined } : {});
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_header' } });
    expect(r.json.error.message).toContain('"mcp-client-2025-04-04"');
    expect(r.json.error.message).toContain('anthropic_betas');
    expect(upstream.requests.length).toBe(before);
  });

  test('anthropic-version passes as one date; anything else is a 400 invalid_header and nothing goes upstream', async () => {
    const send = (version: string) =>
      fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': version },
        body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      });
    const ok = await send('2023-06-01');
    expect(ok.status).toBe(200);
    expect(upstream.messageRequests.at(-1)!.headers['anthropic-version']).toBe('2023-06-01');
    for (const version of ['2023-06-01, jane.doe@example.com', 'latest', '']) {
      const before = upstream.requests.length;
      const r = await send(version);
      const json = (await r.json()) as any;
      expect(r.status, JSON.stringify(json)).toBe(400);
      expect(json.error.code).toBe('invalid_header');
      expect(json.error.message).toContain('anthropic-version must be one API version date');
      expect(upstream.requests.length).toBe(before);
    }
  });

  test('every recorded Claude Code and Agent SDK beta list reaches the upstream as sent', async () => {
    for (const header of [...CLAUDE_CODE_BETAS, ...AGENT_SDK_BETAS]) {
      const r = await post(gw, key, '/v1/messages?beta=true', header);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(upstream.messageRequests.at(-1)!.headers['anthropic-beta']).toBe(header);
    }
  });

  test('the upstream receives the values the gateway checked, comma-joined', async () => {
    const r = await post(gw, key, '/v1/messages', ' interleaved-thinking-2025-05-14 ,, context-management-2025-06-27 ');
    expect(r.status).toBe(200);
    expect(upstream.messageRequests.at(-1)!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14,context-management-2025-06-27');
    const none = await post(gw, key, '/v1/messages', ' , ');
    expect(none.status).toBe(200);
    expect(upstream.messageRequests.at(-1)!.headers['anthropic-beta']).toBeUndefined();
  });

  test("a body's anthropic_beta outside the list is a 400 validation_failed", async () => {
    const r = await post(gw, key, '/v1/messages', undefined, { anthropic_beta: ['web-fetch-2025-09-10'] });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'validation_failed' });
    expect(r.json.error.message).toContain('"web-fetch-2025-09-10"');
  });

  test('anthropic_betas in the server config replaces the default list', async () => {
    const allowed = await post(custom, customKey, '/v1/messages', 'web-fetch-2025-09-10');
    expect(allowed.status).toBe(200);
    expect(upstream.messageRequests.at(-1)!.headers['anthropic-beta']).toBe('web-fetch-2025-09-10');
    const refused = await post(custom, customKey, '/v1/messages', 'claude-code-20250219');
    expect(refused.status).toBe(400);
    expect(refused.json.error.code).toBe('invalid_header');
  });
});
