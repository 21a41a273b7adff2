// approvals: in agentgw.yaml: defaults, and a clear sentence for each bad value.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';

const load = (approvals: unknown) => loadConfig({ env: {}, overrides: { approvals } });

describe('approvals in the server config', () => {
  it('defaults to a 300 s timeout, keep-alives every 5 s and no notify_url', () => {
    expect(loadConfig({ env: {} }).approvals).toEqual({ timeout_s: 300, keep_alive_s: 5 });
    expect(load({ timeout_s: 3, notify_url: 'https://hooks.example.com/agentgw' }).approvals).toEqual({ timeout_s: 3, keep_alive_s: 5, notify_url: 'https://hooks.example.com/agentgw' });
  });

  it.each([
    [{ notify_url: 'ftp://hooks.example.com/x' }, 'approvals.notify_url: must be an http:// or https:// URL that accepts a JSON POST of each new approval'],
    [{ notify_url: 'not a url' }, 'approvals.notify_url: must be an http:// or https:// URL'],
    [{ timeout_s: 0 }, 'approvals.timeout_s: must be at least 1 second'],
    [{ timeout_s: 1.5 }, 'approvals.timeout_s: must be a whole number of seconds'],
    [{ keep_alive_s: 0 }, 'approvals.keep_alive_s: must be at least 0.05'],
    [{ timeout: 3 }, 'approvals'],
  ])('refuses %j, saying what to fix', (value, message) => {
    expect(() => load(value)).toThrow(ConfigError);
    expect(() => load(value)).toThrow(message);
  });
});
