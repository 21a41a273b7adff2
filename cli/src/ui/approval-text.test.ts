// How a held call reads in the terminal: every character of its arguments visible, long values folded and never cut.
import { describe, expect, it } from 'vitest';
import type { Approval } from '../admin-client/types.js';
import { approvalLines, argumentLines, outcomeText, revealHidden } from './approval-text.js';
import { plainText } from './plain.js';

const T0 = Date.parse('2026-11-28T09:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

function approval(over: Partial<Approval> = {}): Approval {
  return {
    id: 'apr_0123',
    tenant_id: 'acme',
    agent_id: 'agt_42',
    trace_id: 'run-42',
    request_id: 'req_9',
    tool: 'Bash',
    arguments: { command: 'kubectl apply -f deploy.yaml' },
    rule: { policy_id: 'coding-agents', index: 3 },
    reason: 'deploys need a person',
    status: 'pending',
    decided_by: null,
    comment: null,
    created_at: iso(0),
    decided_at: null,
    expires_at: iso(300_000),
    ...over,
  };
}

/** The characters of the arguments as printed, folds and indentation taken out. */
const joined = (lines: string[]) => lines.map((l) => l.trim()).join('');

describe('arguments as people read them', () => {
  it('pretty JSON, two spaces a level', () => {
    expect(argumentLines({ command: 'ls -la', opts: { depth: 2, all: true, paths: ['a', 'b'], none: null, empty: {}, list: [] } }, 100)).toEqual([
      '{',
      '  "command": "ls -la",',
      '  "opts": {',
      '    "depth": 2,',
      '    "all": true,',
      '    "paths": [',
      '      "a",',
      '      "b"',
      '    ],',
      '    "none": null,',
      '    "empty": {},',
      '    "list": []',
      '  }',
      '}',
    ]);
  });

  it("a string's lines on lines of their own, each ending with its \\n", () => {
    const patch = '*** Begin Patch\n*** Update File: src/app.ts\n-old\n+new\n*** End Patch';
    expect(argumentLines({ input: patch }, 100)).toEqual([
      '{',
      '  "input": "*** Begin Patch\\n',
      '      *** Update File: src/app.ts\\n',
      '      -old\\n',
      '      +new\\n',
      '      *** End Patch"',
      '}',
    ]);
    // A call whose input is one string (a custom tool) reads the same way.
    expect(argumentLines('a\nb', 100)).toEqual(['"a\\n', '    b"']);
  });

  it('a long value is folded within the width, at a space where it can, and every character is kept', () => {
    const command = `curl -s https://example.com/${'x'.repeat(150)} | tail -n 5 && echo done; ${'y'.repeat(30)} rm -rf /tmp/build`;
    const lines = argumentLines({ command }, 60);
    expect(lines.length).toBeGreaterThan(3);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(60);
    // Folded, not cut: the end of the command is there.
    expect(lines.join('\n')).toContain('rm -rf /tmp/build"');
    expect(joined(lines).replace(/\s/g, '')).toBe(JSON.stringify({ command }).replace(/\s/g, ''));
  });

  it('a fold never cuts through an escape', () => {
    const lines = argumentLines({ s: '\u001b'.repeat(40) }, 30);
    expect(lines[0]).toBe('{');
    for (const l of lines.slice(1, -1)) expect(l.trim()).toMatch(/^("s": ")?(\\u001b)*"?$/);
  });

  it('characters a terminal would hide or act on are written as escapes', () => {
    // An ANSI sequence that clears the line, a carriage return, a right-to-left override, zero-width and tag characters.
    const sneaky = 'echo hi\u001b[2K\r rm -rf ~ \u202egnp.exe\u200b\u{e0041}';
    const lines = argumentLines({ command: sneaky }, 200);
    expect(lines.join('\n')).toContain('\\u001b[2K\\r rm -rf ~ \\u202egnp.exe\\u200b\\u{e0041}');
    for (const l of lines) expect(l).not.toMatch(/[\u0000-\u001f\u202e\u200b\u{e0041}]/u);
    expect(revealHidden('tab\there')).toBe('tab\\u0009here');
    expect(revealHidden('plain ascii, ünïcödé, 漢字 🙂')).toBe('plain ascii, ünïcödé, 漢字 🙂');
  });

  it('keys with hidden characters are escaped too', () => {
    expect(argumentLines({ 'a\u202eb': 1 }, 100)).toEqual(['{', '  "a\\u202eb": 1', '}']);
  });
});

describe('an approval as a block of lines', () => {
  it('pending: whose, why it was held, how long it has waited and when it expires, then the arguments', () => {
    const text = plainText(approvalLines(approval(), { now: T0 + 12_000, agent: () => 'acme/coding-bot' }));
    expect(text).toBe(
      [
        'apr_0123  pending  Bash',
        '  agent acme/coding-bot, trace run-42, request req_9',
        '  held 2026-11-28T09:00:00.000Z by rule 3 of policy coding-agents: deploys need a person',
        '  waiting 12.00s, expires 2026-11-28T09:05:00.000Z (in 4m48s)',
        '  arguments:',
        '    {',
        '      "command": "kubectl apply -f deploy.yaml"',
        '    }',
        '',
      ].join('\n'),
    );
  });

  it('decided: who decided, when, how long after it was held, and the comment', () => {
    const a = approval({ status: 'approved', decided_by: 'root', decided_at: iso(62_000), comment: 'checked the plan' });
    expect(outcomeText(a)).toBe('approved by root at 2026-11-28T09:01:02.000Z, 1m02s after it was held: "checked the plan"');
    expect(outcomeText(approval({ status: 'timed_out', decided_at: iso(300_000) }))).toBe(
      'timed out at 2026-11-28T09:05:00.000Z (nobody decided in time): the call was refused',
    );
    expect(outcomeText(approval({ status: 'abandoned', decided_at: iso(5_000) }))).toBe('abandoned at 2026-11-28T09:00:05.000Z: the client left before a decision');
  });

  it('a decided one may show only the first lines of long arguments, and says how many are left', () => {
    const args = { content: Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n') };
    const a = approval({ status: 'denied', decided_by: 'ops', decided_at: iso(1000), arguments: args });
    const text = plainText(approvalLines(a, { maxArgumentLines: 12 }));
    expect(text).toContain('... 30 more lines (--json prints them all)');
    expect(plainText(approvalLines(a))).toContain('line 39');
  });
});

describe('the console shows arguments as the CLI prints them', () => {
  it('the same escapes, the same lines (the console folds long ones itself)', async () => {
    const { argumentsText, revealHidden: consoleReveal } = await import('../../../console/src/arguments.js');
    const samples: unknown[] = [
      { command: 'rm -rf /tmp/x\u202e', cwd: '/work' },
      { patch: '*** Begin Patch\n+line\t1\n*** End Patch', 'k\ney': [1, true, null, { deep: ['a\nb'] }] },
      'raw input\nof a custom tool \u001b[2K',
      [],
      {},
      42,
    ];
    for (const s of samples) expect(argumentsText(s)).toBe(argumentLines(s, 100_000).join('\n'));
    for (const t of ['\u0000\u001f\u007f\u0085\u00ad\u200b\u2028\u202e\u2066\ufeff\u{e0001}', 'ünïcödé 漢字 emoji 🙂']) expect(consoleReveal(t)).toBe(revealHidden(t));
  });
});
