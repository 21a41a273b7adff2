import { describe, expect, it } from 'vitest';
import { connect, resolveAdminUrl } from './connection.js';

describe('connection', () => {
  it('takes flags over env over the default, and adds /api to a bare host', () => {
    expect(resolveAdminUrl({}, {})).toBe('http://127.0.0.1:8080/api');
    expect(resolveAdminUrl({}, { AGENTGW_ADMIN_URL: 'http://gw:9000' })).toBe('http://gw:9000/api');
    expect(resolveAdminUrl({ adminUrl: 'https://gw.example/admin/api/' }, { AGENTGW_ADMIN_URL: 'http://x' })).toBe('https://gw.example/admin/api');
  });

  it('refuses what is not an http(s) URL, and a missing key, in one sentence', () => {
    expect(() => resolveAdminUrl({ adminUrl: 'gw:8080' }, {})).toThrow('the admin URL "gw:8080" must start with http:// or https://');
    expect(() => resolveAdminUrl({ adminUrl: 'not a url' }, {})).toThrow(/is not a URL/);
    expect(() => connect({}, {})).toThrow('no admin key: pass --admin-key or set AGENTGW_ADMIN_KEY');
    expect(connect({ adminKey: 'k' }, {}).baseUrl).toBe('http://127.0.0.1:8080/api');
  });
});
