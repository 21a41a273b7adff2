import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { Box } from 'ink';
import { render } from 'ink-testing-library';
import { afterAll, describe, expect, it, vi } from 'vitest';

// colour is decided when ink loads: force it so the test can see which colour each status gets
vi.hoisted(() => {
  process.env.FORCE_COLOR = '1';
});

import { TRACE } from './__fixtures__/trace-detail.js';
import { TraceTimelineView } from './ink/trace-timeline-view.js';
import { renderTrace, traceText } from './render-trace.js';
import { BAR_FULL, BAR_WAIT, DEFAULT_BAR_WIDTH, traceTimelineLines } from './trace-timeline.js';

const rows = (text: string) => text.split('\n').filter((l) => /^\s*\d+\s{2}\S/.test(l));
const ESC = '\u001b[';
const coloured = (frame: string, sgr: string, text: string) => frame.includes(`${ESC}${sgr}m${text}${ESC}39m`);

describe('trace timeline', () => {
  afterAll(() => {
    delete process.env.FORCE_COLOR;
  });

  it('plain text', () => {
    expect(traceText(TRACE, 'plain')).toMatchSnapshot();
  });

  it("lists the tool calls each step's answer proposed, with the decision, the rule and its reason", () => {
    const trace = structuredClone(TRACE);
    trace.requests[0]!.tool_calls = [
      { id: 'call_1', name: 'Bash', decision: 'denied', rule: { policy_id: 'dev', index: 1 }, reason: 'destructive command', approval_id: null, wait_ms: 0 },
      { id: 'call_2', name: 'Read', decision: 'allowed', rule: null, reason: null, approval_id: null, wait_ms: 0 },
    ];
    trace.requests[2]!.tool_calls = [{ id: 'req_3', name: 'github/create_issue', decision: 'allowed', rule: { policy_id: 'dev', index: 4 }, reason: null, approval_id: null, wait_ms: 0 }];
    const text = traceText(trace, 'plain');
    const calls = text.slice(text.indexOf('Tool calls:')).split('\n').slice(1, 4);
    expect(calls.map((l) => l.trim().split(/\s{2,}/))).toEqual([
      ['step 1', 'Bash', 'denied', 'policy dev, rule 1: destructive command'],
      ['step 1', 'Read', 'allowed'],
      ['step 3', 'github/create_issue', 'allowed', 'policy dev, rule 4'],
    ]);
    expect(traceText(TRACE, 'plain')).not.toContain('Tool calls:');
  });

  it('one row per step with status, error code, tokens, cost, latency and ttft', () => {
    const [r1, r2, r3, r4] = rows(traceText(TRACE, 'plain'));
    expect(r1).toMatch(/^\s+1\s+openai\/gpt-4o-mini\s+ok\s+420\/96\s+\$0\.000121\s+\+0ms\s+820ms\s+-\s+\|/);
    expect(r2).toMatch(/^\s+2\s+openai\/gpt-4o-mini\s+blocked 403 pii_detected\s+0\/0\s+\$0\.00\s+\+900ms\s+4ms\s+-\s+\|/);
    expect(r3).toMatch(/^\s+3\s+anthropic\/claude-sonnet-4-5\s+ok\s+610\/250\s+\$0\.00558\s+\+950ms\s+1\.65s\s+310ms\s+\|/);
    expect(r4).toMatch(/error 504 upstream_timeout/);
  });

  it('a step in flight reads "running", with no status code, its tokens 0 and its latency so far', () => {
    const trace = structuredClone(TRACE);
    Object.assign(trace.requests[3]!, { status: 'running', http_status: 0, error_code: null, prompt_tokens: 0, completion_tokens: 0, cost: 0, ttft_ms: null });
    const r4 = rows(traceText(trace, 'plain'))[3]!;
    expect(r4).toMatch(/^\s+4\s+\S+\s+running\s+0\/0\s+\$0\.00\s+\+\S+\s+\S+\s+-\s+\|/);
    expect(r4).not.toMatch(/running 0/);
  });

  it('bars share one time axis: placed by offset from the trace start, sized by latency', () => {
    const bars = rows(traceText(TRACE, 'plain')).map((r) => r.slice(r.indexOf('|') + 1, r.lastIndexOf('|')));
    expect(new Set(rows(traceText(TRACE, 'plain')).map((r) => r.indexOf('|'))).size).toBe(1);
    for (const b of bars) expect(b).toHaveLength(DEFAULT_BAR_WIDTH);
    const start = (b: string) => b.search(/\S/);
    const length = (b: string) => b.trim().length;
    // the span is 4450 ms over 40 characters
    expect(bars.map(start)).toEqual([0, 8, 8, 24, 35]);
    expect(bars.map(length)).toEqual([7, 1, 15, 11, 4]);
    // the streamed step shows its 310 ms before the first token
    expect(bars[2].trim()).toBe(BAR_WAIT.repeat(3) + BAR_FULL.repeat(12));
    expect(traceText(TRACE, 'plain')).toContain(`${BAR_FULL} request  ${BAR_WAIT} before the first token`);
  });

  it('names the agent tenant/name when the caller knows it, tenant/id otherwise', () => {
    expect(traceText(TRACE, 'plain', { agentName: 'acme/support-bot' }).split('\n')[1]).toBe(
      'agent acme/support-bot, 2026-01-31T10:00:00.000Z to 2026-01-31T10:00:04.450Z',
    );
    expect(traceText(TRACE, 'plain').split('\n')[1]).toMatch(/^agent acme\/agt_0123456789abcdef, /);
  });

  it('totals and PII types', () => {
    const text = traceText(TRACE, 'plain');
    expect(text).toContain('Total: 5 requests, 2 errors (1 blocked), 2042 tokens (1630 prompt, 412 completion), $0.005831, wall time 4.45s\n');
    expect(text).toContain('PII: email (steps 2, 5), phone (step 2)\n');
    const clean = { ...TRACE, requests: TRACE.requests.map((r) => ({ ...r, pii_types: [] })) };
    expect(traceText(clean, 'plain')).not.toContain('PII');
  });

  it('fits the axis to a terminal width', () => {
    const wide = traceTimelineLines(TRACE, { columns: 160 });
    const narrow = traceTimelineLines(TRACE, { columns: 100 });
    expect(Math.max(...wide.map((l) => l.text.length))).toBeLessThanOrEqual(160);
    expect(Math.max(...wide.map((l) => l.text.length))).toBeGreaterThan(150);
    // too narrow a terminal still gets a readable axis; the terminal wraps the rest
    expect(rows(narrow.map((l) => l.text).join('\n'))[0]).toMatch(/\|.{16}\|$/);
  });

  it('ink prints the same lines, coloured by status', () => {
    // ink-testing-library's terminal is 100 columns; the real output is laid out unbounded (inkTraceText)
    const { lastFrame, unmount } = render(
      <Box width={200}>
        <TraceTimelineView trace={TRACE} />
      </Box>,
    );
    const frame = lastFrame() ?? '';
    unmount();
    expect(stripVTControlCharacters(frame)).toMatchSnapshot();
    const lines = (s: string) => stripVTControlCharacters(s).split('\n').map((l) => l.trimEnd());
    expect(lines(frame)).toEqual(lines(traceText(TRACE, 'plain').trimEnd()));
    expect(coloured(frame, '32', 'ok')).toBe(true);
    expect(coloured(frame, '33', 'blocked 403 pii_detected')).toBe(true);
    expect(coloured(frame, '31', 'error 504 upstream_timeout')).toBe(true);
    expect(coloured(frame, '31', BAR_FULL.repeat(11))).toBe(true);
  });

  it('the terminal renderer prints the same lines', async () => {
    const { inkTraceText } = await import('./ink/render-ink.js');
    expect(stripVTControlCharacters(inkTraceText(TRACE)).split('\n').map((l) => l.trimEnd())).toEqual(traceText(TRACE, 'plain').split('\n'));
  });

  it('--json is the API document', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (d) => (text += d));
    await renderTrace(TRACE, 'json', out);
    expect(JSON.parse(text)).toEqual(TRACE);
  });
});
