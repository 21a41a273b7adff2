import { describe, expect, test } from 'vitest';
import { loadConfig } from '../config.js';
import { startTestGateway } from '../test-support/gateway.js';

const providers = { a: { type: 'mock' }, b: { type: 'mock' } };
const messageOf = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('no error');
};

describe('models.<alias> in agentgw.yaml', () => {
  test('takes a list of targets or {strategy, targets} with weight, priority, rpm and tpm', () => {
    const c = loadConfig({
      env: {},
      overrides: { providers, models: { plain: ['a/m'], w: { strategy: 'weighted', targets: [{ model: 'a/m', weight: 2, priority: 0, rpm: 60, tpm: 1000 }, 'b/m'] } } },
    });
    expect(c.models.w).toEqual({ strategy: 'weighted', targets: [{ model: 'a/m', weight: 2, priority: 0, rpm: 60, tpm: 1000 }, 'b/m'] });
    expect(loadConfig({ env: {}, overrides: { providers, models: { d: { targets: ['a/m'] } } } }).models.d).toEqual({ strategy: 'fallback', targets: ['a/m'] });
  });

  test('refuses an unknown strategy, a weight of 0, an unknown target key and a target that is not provider/model, naming the field', () => {
    expect(messageOf(() => loadConfig({ env: {}, overrides: { providers, models: { x: { strategy: 'random', targets: ['a/m'] } } } }))).toMatch(/models\.x/);
    expect(messageOf(() => loadConfig({ env: {}, overrides: { providers, models: { x: { strategy: 'weighted', targets: [{ model: 'a/m', weight: 0 }] } } } }))).toMatch(/models\.x/);
    expect(messageOf(() => loadConfig({ env: {}, overrides: { providers, models: { x: { targets: [{ model: 'a/m', wieght: 2 }] } } } }))).toMatch(/models\.x/);
    expect(messageOf(() => loadConfig({ env: {}, overrides: { providers, models: { x: ['gpt-4o'] } } }))).toMatch(/models\.x/);
  });

  test('a provider with both api_key and api_keys does not start, saying which to drop', async () => {
    await expect(
      startTestGateway({ config: { providers: { p: { type: 'openai', api_key: 'sk-1', api_keys: ['sk-2', 'sk-3'] } }, models: { m: ['p/x'] } } }),
    ).rejects.toThrow('providers.p: set api_key or api_keys, not both');
  });
});
