import { describe, expect, it } from 'vitest';
import { Metrics, countToolDecision } from './metrics.js';

const value = async (m: Metrics, decision: string) => {
  const family = (await m.registry.getMetricsAsJSON()).find((f) => f.name === 'agentgw_tool_calls_total');
  return (family?.values as Array<{ labels: Record<string, string>; value: number }> | undefined)?.find((v) => v.labels.decision === decision)?.value ?? 0;
};

describe('agentgw_tool_calls_total', () => {
  it('counts each decided call by decision, listed by every registry of the process', async () => {
    const a = new Metrics();
    const b = new Metrics();
    const [denied, allowed] = [await value(a, 'denied'), await value(a, 'allowed')];
    countToolDecision('denied');
    countToolDecision('denied');
    countToolDecision('allowed');
    expect(await value(a, 'denied')).toBe(denied + 2);
    expect(await value(b, 'denied')).toBe(denied + 2);
    expect(await value(a, 'allowed')).toBe(allowed + 1);
    expect(await a.registry.metrics()).toMatch(/^agentgw_tool_calls_total\{decision="denied"\} \d+$/m);
  });
});
