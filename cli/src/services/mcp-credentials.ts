import type { McpCredentials } from '@agentgw/gateway/contract';
import { AdminHttp } from '../admin-client/http.js';
import type { Agent } from '../admin-client/types.js';
import { CliError } from '../errors.js';
import { findAgent } from './agent-ref.js';
import { connect, resolveAdminUrl, type ConnectionOptions } from './connection.js';

function http(flags: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): AdminHttp {
  const adminKey = flags.adminKey ?? env.AGENTGW_ADMIN_KEY;
  if (!adminKey) throw new CliError('no admin key: pass --admin-key or set AGENTGW_ADMIN_KEY');
  return new AdminHttp({ baseUrl: resolveAdminUrl(flags, env), adminKey });
}

const path = (agent: Agent, server?: string) => `/agents/${encodeURIComponent(agent.id)}/mcp-credentials${server === undefined ? '' : `/${encodeURIComponent(server)}`}`;

/**
 * The headers of `--header "Name: value"` and `--header-env Name=ENV_VAR` (the value read from the environment, so it
 * stays out of shell history and process listings).
 */
export function credentialHeaders(literal: string[] = [], fromEnv: string[] = [], env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of literal) {
    const at = h.indexOf(':');
    if (at <= 0) throw new CliError(`--header "${h.slice(0, 40)}" is not "Name: value": write it as --header "Authorization: Bearer <token>"`);
    out[h.slice(0, at).trim()] = h.slice(at + 1).trim();
  }
  for (const h of fromEnv) {
    const at = h.indexOf('=');
    if (at <= 0 || at === h.length - 1) throw new CliError(`--header-env "${h}" is not Name=ENV_VAR: write it as --header-env Authorization=TICKETS_TOKEN`);
    const name = h.slice(0, at).trim();
    const variable = h.slice(at + 1).trim();
    const value = env[variable];
    if (value === undefined || value === '') throw new CliError(`--header-env ${name}=${variable}: the environment variable ${variable} is not set`);
    out[name] = value;
  }
  if (Object.keys(out).length === 0) throw new CliError('no header given: pass --header "Name: value" or --header-env Name=ENV_VAR (repeatable)');
  return out;
}

/** PUT /api/agents/{id}/mcp-credentials/{server}: the headers sent to that server alone for that agent. */
export async function setMcpCredentials(flags: ConnectionOptions, agentRef: string, server: string, headers: Record<string, string>): Promise<{ agent: Agent; credentials: McpCredentials }> {
  const agent = await findAgent(connect(flags), agentRef);
  const res = await http(flags).send<McpCredentials>('PUT', path(agent, server), { body: { headers } });
  return { agent, credentials: res.data };
}

/** GET /api/agents/{id}/mcp-credentials: which servers the agent has credentials for (never their values). */
export async function listMcpCredentials(flags: ConnectionOptions, agentRef: string): Promise<{ agent: Agent; data: McpCredentials[] }> {
  const agent = await findAgent(connect(flags), agentRef);
  const res = await http(flags).send<{ data: McpCredentials[] }>('GET', path(agent));
  return { agent, data: res.data.data };
}

/** DELETE /api/agents/{id}/mcp-credentials/{server}: the server's own credentials serve the agent again. */
export async function unsetMcpCredentials(flags: ConnectionOptions, agentRef: string, server: string): Promise<Agent> {
  const agent = await findAgent(connect(flags), agentRef);
  await http(flags).send('DELETE', path(agent, server));
  return agent;
}
