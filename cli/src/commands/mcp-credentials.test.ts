// `agentgw mcp credentials set|list|unset`: an agent's own headers for an upstream MCP server through the admin API,
// the value given on the command line or read from the environment, and never printed back.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHttpMcpServer, type HttpMcpFixture } from '../../../gateway/src/mcp/__fixtures__/http-mcp-server.js';
import { startTestGateway, type TestGateway } from '../../../gateway/src/test-support/gateway.js';
import { CliError } from '../errors.js';
import { connect } from '../services/connection.js';
import { credentialHeaders } from '../services/mcp-credentials.js';
import { mcpCredentialsListCommand, mcpCredentialsSetCommand, mcpCredentialsUnsetCommand } from './mcp-credentials.js';

const TOKEN = 'cli-upstream-token-5a1f0c';

/** What a call printed on stdout and stderr. */
async function printed(run: () => Promise<number>): Promise<{ code: number; out: string }> {
  let out = '';
  const capture = (chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  };
  const o = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const e = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    return { code: await run(), out };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe('agentgw mcp credentials', () => {
  let web: HttpMcpFixture;
  let gw: TestGateway;
  let conn: { adminUrl: string; adminKey: string };
  beforeAll(async () => {
    web = await startHttpMcpServer();
    gw = await startTestGateway({ config: { mcp_servers: { web: { url: web.url, timeout_ms: 5_000 } } } });
    conn = { adminUrl: gw.adminUrl, adminKey: gw.adminKey };
    await connect(conn).createTenant({ id: 'acme', name: 'Acme' });
    await connect(conn).createAgent({ tenant_id: 'acme', name: 'bot' });
  });
  afterAll(async () => {
    await gw?.close();
    await web?.close();
  });

  it('sets headers from the command line and the environment, lists them without values, and unsets them', async () => {
    process.env.AGENTGW_TEST_MCP_TOKEN = TOKEN;
    try {
      const set = await printed(() => mcpCredentialsSetCommand('acme/bot', 'web', { ...conn, header: ['X-Org: acme'], headerEnv: ['Authorization=AGENTGW_TEST_MCP_TOKEN'] }));
      expect(set.code).toBe(0);
      expect(set.out).toMatch(/Set X-Org, Authorization for acme\/bot on MCP server web/);
      expect(set.out).not.toContain(TOKEN);
    } finally {
      delete process.env.AGENTGW_TEST_MCP_TOKEN;
    }
    const listed = await printed(() => mcpCredentialsListCommand('acme/bot', { ...conn, json: true }));
    const rows = JSON.parse(listed.out) as Array<{ server: string; header_names: string[]; set: boolean }>;
    expect(rows).toMatchObject([{ server: 'web', set: true, header_names: ['X-Org', 'Authorization'] }]);
    expect(listed.out).not.toContain(TOKEN);

    expect((await printed(() => mcpCredentialsUnsetCommand('acme/bot', 'web', conn))).code).toBe(0);
    expect(JSON.parse((await printed(() => mcpCredentialsListCommand('acme/bot', { ...conn, json: true }))).out)).toEqual([]);
  });

  it('refuses what it cannot send, with a sentence naming the flag', async () => {
    expect(() => credentialHeaders([], [])).toThrow(CliError);
    expect(() => credentialHeaders(['Authorization Bearer x'])).toThrow(/is not "Name: value"/);
    expect(() => credentialHeaders([], ['Authorization=AGENTGW_TEST_UNSET_VAR'], {})).toThrow(/AGENTGW_TEST_UNSET_VAR is not set/);
    await expect(mcpCredentialsSetCommand('acme/nobody', 'web', { ...conn, header: ['Authorization: x'] })).rejects.toThrow(/no agent named nobody/);
  });
});
