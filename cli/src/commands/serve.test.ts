import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@agentgw/gateway';
import { SERVE_APPROVALS, SERVE_LIMITS, declareServe } from './serve.js';

function help(): string {
  let out = '';
  const cmd = declareServe(new Command('serve')).configureOutput({ writeOut: (s) => (out += s) });
  cmd.outputHelp();
  return out;
}

describe('agentgw serve --help', () => {
  it('lists the limits, the MCP session idle time and /metrics with the defaults the server uses', () => {
    const { limits, mcp, metrics } = loadConfig({ env: {} });
    expect({
      body_mb: limits.body_bytes / (1024 * 1024),
      upstream_body_mb: limits.upstream_body_mb,
      headers_timeout_s: limits.headers_timeout_s,
      request_timeout_s: limits.request_timeout_s,
      keep_alive_timeout_s: limits.keep_alive_timeout_s,
      max_connections: limits.max_connections,
      pii_scan_bytes: limits.pii_scan_bytes,
      db_timeout_ms: limits.db_timeout_ms,
      redis_timeout_ms: limits.redis_timeout_ms,
      redis_breaker_failures: limits.redis_breaker_failures,
      mcp_sessions: limits.mcp_sessions,
      mcp_sessions_per_agent: limits.mcp_sessions_per_agent,
      session_idle_s: mcp.session_idle_s,
    }).toEqual(SERVE_LIMITS);
    expect(metrics).toEqual({ require_key: true });

    const text = help();
    for (const [key, value] of Object.entries(SERVE_LIMITS)) expect(text).toMatch(new RegExp(`\\b${key}: ${value}\\s`));
    expect(text).toContain('require_key: true');
    expect(text).toContain('listen: HOST:PORT');
    // What the request timeout measures, so nobody lowers it thinking it would cut streams.
    expect(text).toMatch(/answer is not timed/);
  });

  it('lists the approvals defaults the server uses', () => {
    const { approvals } = loadConfig({ env: {} });
    expect({ timeout_s: approvals.timeout_s, keep_alive_s: approvals.keep_alive_s }).toEqual(SERVE_APPROVALS);
    const text = help();
    for (const [key, value] of Object.entries(SERVE_APPROVALS)) expect(text).toMatch(new RegExp(`\\b${key}: ${value}\\s`));
    expect(text).toContain('notify_url: URL');
  });
});
