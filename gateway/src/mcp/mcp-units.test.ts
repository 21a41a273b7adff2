// The small pieces of /mcp: names, session ids, which globs name a server, the config, the policy fields.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadConfig, ConfigError } from '../config.js';
import { DEFAULT_RULES, mergePolicy, type Policy, PutPolicy } from '../contract/index.js';
import { serverVisible, toolAllowed } from '../policy/tool-allowlist.js';
import { maxToolCallsPerTrace } from '../policy/tool-call-cap.js';
import { KeyHasher } from '../security/keys.js';
import { federatedName, federatedUri, splitFederatedName, splitFederatedUri } from './names.js';
import { SessionIds } from './session-ids.js';

const policy = (over: Partial<Policy>): Policy => ({
  id: 'p',
  tenant_id: null,
  monthly_budget: null,
  daily_budget: null,
  allowed_models: null,
  allowed_tools: null,
  rules: DEFAULT_RULES,
  labels: {},
  created_at: '',
  updated_at: '',
  ...over,
});

describe('names', () => {
  test('tools and prompts are <server>__<name>, split at the first __ (server names never hold one)', () => {
    expect(federatedName('github', 'create_issue')).toBe('github__create_issue');
    expect(splitFederatedName('github__create__issue')).toEqual({ server: 'github', name: 'create__issue' });
    expect(splitFederatedName('my_server__x')).toEqual({ server: 'my_server', name: 'x' });
    for (const bad of ['plain', '__x', 'x__', '']) expect(splitFederatedName(bad)).toBeNull();
  });

  test('resource URIs are agentgw://<server>/<original URI>', () => {
    const uri = federatedUri('docs', 'file:///a/b.md');
    expect(uri).toBe('agentgw://docs/file:///a/b.md');
    expect(splitFederatedUri(uri)).toEqual({ server: 'docs', uri: 'file:///a/b.md' });
    for (const bad of ['file:///a', 'agentgw://docs', 'agentgw://docs/', 'agentgw:///x']) expect(splitFederatedUri(bad)).toBeNull();
  });
});

describe('session ids', () => {
  const ids = new SessionIds(new KeyHasher('secret'));

  test('carry the protocol version, verify for the agent that opened them only, and fit a trace id', () => {
    const id = ids.mint('agt_1', '2025-06-18');
    expect(id).toMatch(/^[\x21-\x7e]{1,128}$/);
    expect(ids.verify(id, 'agt_1')).toEqual({ protocolVersion: '2025-06-18' });
    expect(ids.verify(id, 'agt_2')).toBeNull();
    expect(new SessionIds(new KeyHasher('other deployment')).verify(id, 'agt_1')).toBeNull();
    const [nonce, version, sig] = id.split('.');
    expect(ids.verify(`${nonce}.20241105.${sig}`, 'agt_1')).toBeNull();
    // A signature changed in its first character (all six bits of it count; the last one's low bits may not).
    expect(ids.verify(`${nonce}.${version}.${sig![0] === 'A' ? 'B' : 'A'}${sig!.slice(1)}`, 'agt_1')).toBe(null);
    expect(ids.verify('not-a-session', 'agt_1')).toBeNull();
  });

  test('carry what the client declared it takes, signed: another node asks it for sampling and elicitation only then', () => {
    const id = ids.mint('agt_1', '2025-11-25', { sampling: { tools: {} }, elicitation: { form: {} }, roots: { listChanged: true }, experimental: { x: {} } });
    expect(id).toMatch(/^[\x21-\x7e]{1,128}$/);
    expect(ids.verify(id, 'agt_1')).toEqual({ protocolVersion: '2025-11-25' });
    expect(SessionIds.clientCapabilitiesOf(id)).toEqual({ sampling: { tools: {} }, elicitation: { form: {} }, roots: { listChanged: true } });
    const [nonce, version, , sig] = id.split('.');
    // Capabilities added to an id, or taken off it, break its signature.
    expect(ids.verify(`${nonce}.${version}.se.${sig}`, 'agt_1')).toBeNull();
    expect(ids.verify(`${nonce}.${version}.${sig}`, 'agt_1')).toBeNull();
    expect(SessionIds.clientCapabilitiesOf(ids.mint('agt_1', '2025-11-25', {}))).toEqual({});
    expect(SessionIds.clientCapabilitiesOf(ids.mint('agt_1', '2025-11-25', 'nonsense'))).toEqual({});
  });
});

describe('allowed_tools', () => {
  test('globs over server/tool: null all, [] none', () => {
    expect(toolAllowed(null, 'github/create_issue')).toBe(true);
    expect(toolAllowed(undefined, 'github/create_issue')).toBe(true);
    expect(toolAllowed([], 'github/create_issue')).toBe(false);
    expect(toolAllowed(['github/*'], 'github/create_issue')).toBe(true);
    expect(toolAllowed(['github/read_?'], 'github/read_x')).toBe(true);
    expect(toolAllowed(['*/search'], 'web/search')).toBe(true);
    expect(toolAllowed(['github/*'], 'gitlab/create_issue')).toBe(false);
  });

  test("a server's resources and prompts are visible when some glob of every policy names the server", () => {
    const p = (allowed_tools: string[] | null) => policy({ allowed_tools });
    expect(serverVisible([p(null)], 'docs')).toBe(true);
    expect(serverVisible([p(['docs/search'])], 'docs')).toBe(true);
    expect(serverVisible([p(['d?cs/*'])], 'docs')).toBe(true);
    expect(serverVisible([p(['*'])], 'docs')).toBe(true);
    expect(serverVisible([p(['do*'])], 'docs')).toBe(true);
    expect(serverVisible([p(['docs'])], 'docs')).toBe(false);
    expect(serverVisible([p(['web/*'])], 'docs')).toBe(false);
    expect(serverVisible([p([])], 'docs')).toBe(false);
    expect(serverVisible([p(null), p(['web/*'])], 'docs')).toBe(false);
  });

  test('the contract: PUT takes allowed_tools and rules.max_tool_calls_per_trace; policies stored before read as null', () => {
    expect(PutPolicy.safeParse({ allowed_tools: ['github/*', '*/read_*'], rules: { max_tool_calls_per_trace: 20 } }).success).toBe(true);
    expect(PutPolicy.safeParse({ allowed_tools: ['has space'] }).success).toBe(false);
    expect(PutPolicy.safeParse({ rules: { max_tool_calls_per_trace: 10_001 } }).success).toBe(false);
    expect(PutPolicy.safeParse({ rules: { max_tool_calls_per_trace: 1.5 } }).success).toBe(false);
    const merged = mergePolicy(null, {});
    expect(merged.allowed_tools).toBeNull();
    expect(merged.rules.max_tool_calls_per_trace).toBeNull();
    const { allowed_tools: _gone, ...before } = merged;
    expect(mergePolicy(before, { rules: { rpm: 5 } }).allowed_tools).toBeNull();
    expect(mergePolicy(merged, { allowed_tools: [] }).allowed_tools).toEqual([]);
  });

  test('max_tool_calls_per_trace: the tightest of the policies that apply', () => {
    const cap = (n: number | null) => policy({ rules: { ...DEFAULT_RULES, max_tool_calls_per_trace: n } });
    expect(maxToolCallsPerTrace([cap(null)])).toBeNull();
    expect(maxToolCallsPerTrace([cap(10), cap(null), cap(4)])).toBe(4);
    expect(maxToolCallsPerTrace([{ rules: {} }])).toBeNull();
  });
});

describe('mcp_servers in agentgw.yaml', () => {
  test('HTTP and stdio servers, ${ENV} secrets, timeout_ms 60000 by default, prices', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-mcp-config-'));
    try {
      const path = join(dir, 'agentgw.yaml');
      writeFileSync(
        path,
        [
          'mcp_servers:',
          '  github:',
          '    url: https://mcp.example.com/mcp',
          '    headers: { Authorization: "Bearer ${GITHUB_TOKEN}" }',
          '    prices: { create_issue: 0.002 }',
          '  files:',
          '    command: npx',
          '    args: [-y, "@modelcontextprotocol/server-filesystem", /tmp]',
          '    env: { LOG: "${LOG_LEVEL}" }',
          '    timeout_ms: 5000',
        ].join('\n'),
      );
      const config = loadConfig({ path, env: { GITHUB_TOKEN: 'ghp_secret', LOG_LEVEL: 'debug' } });
      expect(config.mcp_servers.github).toEqual({ url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ghp_secret' }, prices: { create_issue: 0.002 }, timeout_ms: 60_000, pin: 'changes' });
      expect(config.mcp_servers.files).toEqual({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { LOG: 'debug' }, prices: {}, timeout_ms: 5000, pin: 'changes' });
      expect(() => loadConfig({ path, env: { LOG_LEVEL: 'x' } })).toThrow(/GITHUB_TOKEN is not set/);
      expect(loadConfig({ env: {} }).mcp_servers).toEqual({});
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a name with __ (the tool separator), a URL that is not http, or a server with neither url nor command is refused', () => {
    expect(() => loadConfig({ env: {}, overrides: { mcp_servers: { 'a__b': { url: 'http://x/mcp' } } } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, overrides: { mcp_servers: { a: { url: 'ftp://x/mcp' } } } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, overrides: { mcp_servers: { a: { args: ['x'] } } } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, overrides: { mcp_servers: { a: { url: 'http://x/mcp', command: 'x' } } } })).toThrow(ConfigError);
  });
});
