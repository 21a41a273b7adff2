import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const dir = mkdtempSync(join(tmpdir(), 'agentgw-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function errorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('no ConfigError');
}

describe('server config errors', () => {
  test('every unset ${VAR} is named at once, with file:line:col, the field and what to do', () => {
    const path = file(
      'unset.yaml',
      [
        'providers:',
        '  openai:',
        '    type: openai',
        '    api_key: ${OPENAI_API_KEY}',
        '  claude:',
        '    type: anthropic',
        '    api_key: ${ANTHROPIC_API_KEY}',
        'mcp_servers:',
        '  github:',
        '    url: https://example.test/mcp',
        '    headers: { authorization: "Bearer ${GITHUB_TOKEN}" }',
        '',
      ].join('\n'),
    );
    const e = errorOf(() => loadConfig({ path, env: {} }));
    expect(e.message.split('\n')).toEqual([
      'config: 3 environment variables are not set',
      `  ${path}:4:14: providers.openai.api_key: environment variable OPENAI_API_KEY is not set: export it, or remove the provider openai`,
      `  ${path}:7:14: providers.claude.api_key: environment variable ANTHROPIC_API_KEY is not set: export it, or remove the provider claude`,
      `  ${path}:11:31: mcp_servers.github.headers.authorization: environment variable GITHUB_TOKEN is not set: export it, or remove the MCP server github`,
    ]);
    // Set, they start: the values are read from the environment.
    const config = loadConfig({ path, env: { OPENAI_API_KEY: 'sk-1', ANTHROPIC_API_KEY: 'sk-2', GITHUB_TOKEN: 'gh' } });
    expect((config.providers.openai as { api_key?: string }).api_key).toBe('sk-1');
  });

  test('a wrong value names file:line:col and the field', () => {
    const path = file('limits.yaml', ['listen: 127.0.0.1:8080', 'limits:', '  body_mb: -3', ''].join('\n'));
    expect(errorOf(() => loadConfig({ path, env: {} })).message).toMatch(new RegExp(`^config ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:12: limits\\.body_mb: `));
  });

  test('an unknown key is pointed at itself', () => {
    const path = file('typo.yaml', ['providers:', '  openai:', '    type: openai', '    api_kye: x', ''].join('\n'));
    expect(errorOf(() => loadConfig({ path, env: {} })).message).toBe(`config ${path}:4:5: providers.openai: Unrecognized key: "api_kye"`);
  });

  test('a file that is not YAML names file:line:col', () => {
    const path = file('broken.yaml', ['listen: 127.0.0.1:8080', 'limits: [', ''].join('\n'));
    expect(errorOf(() => loadConfig({ path, env: {} })).message).toMatch(/^config .*broken\.yaml:\d+:\d+: /);
  });

  test('a value from the environment or an override names the field only', () => {
    const e = errorOf(() => loadConfig({ env: {}, overrides: { limits: { body_mb: -1 } } }));
    expect(e.message).toMatch(/^config limits\.body_mb: /);
  });
});
