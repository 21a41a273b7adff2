import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RULES, type Policy, type ToolRule } from '../contract/index.js';
import type { EffectivePolicy } from './effective-policy.js';
import { proposedToolCall, refusalSentence, toolRulesOf, type ProposedToolCall, type ToolRules } from './tool-rules.js';

function policy(id: string, tool_rules: ToolRule[] | null): Policy {
  const at = '2026-01-01T00:00:00.000Z';
  return { id, tenant_id: null, monthly_budget: null, daily_budget: null, allowed_models: null, allowed_tools: null, rules: DEFAULT_RULES, tool_rules, labels: {}, created_at: at, updated_at: at };
}
const eff = (...policies: Policy[]) => ({ policies }) as unknown as EffectivePolicy;
const rulesOf = (...rules: ToolRule[]): ToolRules => toolRulesOf(eff(policy('p', rules)))!;
const call = (name: string, args: unknown): ProposedToolCall => proposedToolCall(name, JSON.stringify(args));
const action = (r: ToolRules, c: ProposedToolCall) => r.decide(c).action;

describe('tool rules: which rule decides', () => {
  it('is null with no rules, so nothing changes', () => {
    expect(toolRulesOf(eff())).toBeNull();
    expect(toolRulesOf(eff(policy('a', null), policy('b', [])))).toBeNull();
  });

  it('lets the first matching rule of a policy decide, and allows when none matches', () => {
    const r = rulesOf(
      { tools: ['Bash'], when: { command: 'git status*' }, action: 'allow' },
      { tools: ['Bash'], action: 'deny', reason: 'no shell' },
    );
    expect(r.decide(call('Bash', { command: 'git status --short' }))).toEqual({ action: 'allow', policyId: 'p', rule: 1, reason: null });
    expect(r.decide(call('Bash', { command: 'ls' }))).toEqual({ action: 'deny', policyId: 'p', rule: 2, reason: 'no shell' });
    expect(r.decide(call('Read', { file_path: '/x' }))).toEqual({ action: 'allow', policyId: null, rule: null, reason: null });
  });

  it('lets a deny in either policy win, then approve over allow', () => {
    const own = policy('own', [{ tools: ['*'], action: 'allow' }]);
    const header = policy('header', [{ tools: ['Write'], action: 'approve' }, { tools: ['Bash'], when: { command: 'rm *' }, action: 'deny' }]);
    const r = toolRulesOf(eff(own, header))!;
    expect(r.decide(call('Bash', { command: 'rm -rf /' }))).toMatchObject({ action: 'deny', policyId: 'header', rule: 2 });
    expect(r.decide(call('Write', { file_path: 'a' }))).toMatchObject({ action: 'approve', policyId: 'header', rule: 1 });
    expect(r.decide(call('Read', {}))).toMatchObject({ action: 'allow', policyId: 'own', rule: 1 });
    expect(toolRulesOf(eff(header, own))!.decide(call('Bash', { command: 'rm x' }))).toMatchObject({ policyId: 'header' });
  });

  it('matches names by glob, * any run, case as written', () => {
    const r = rulesOf({ tools: ['mcp__github__*', 'web*fetch', 'github/*'], action: 'deny' });
    for (const name of ['mcp__github__create_issue', 'mcp__github__', 'webfetch', 'web-x/fetch', 'github/delete_repo']) expect(action(r, call(name, {}))).toBe('deny');
    for (const name of ['mcp__gitlab__x', 'WebFetch', 'gitlab/x', 'xgithub/y']) expect(action(r, call(name, {}))).toBe('allow');
  });

  it('compiles a policy once per object', () => {
    const p = policy('p', [{ tools: ['Bash'], action: 'deny' }]);
    expect(toolRulesOf(eff(p))).toBe(toolRulesOf(eff(p)));
    expect(toolRulesOf(eff({ ...p }))).not.toBe(toolRulesOf(eff(p)));
  });
});

describe('tool rules: when', () => {
  const deny = (when: ToolRule['when']) => rulesOf({ tools: ['*'], when, action: 'deny' });

  it('reads top-level names and JSON pointers; a missing ARG does not match', () => {
    const r = deny({ '/edits/1/file_path': '/etc/*', '/a~1b/~0c': 'x' });
    expect(action(r, call('MultiEdit', { edits: [{ file_path: 'ok' }, { file_path: '/etc/passwd' }], 'a/b': { '~c': 'x' } }))).toBe('deny');
    expect(action(r, call('MultiEdit', { edits: [{ file_path: '/etc/passwd' }], 'a/b': { '~c': 'x' } }))).toBe('allow');
    expect(action(r, call('MultiEdit', { edits: [{}, { file_path: '/etc/passwd' }] }))).toBe('allow');
    expect(action(deny({ '/edits/01/file_path': '*' }), call('E', { edits: [1, { file_path: 'a' }] }))).toBe('allow');
    expect(action(deny({ command: '*' }), call('Bash', {}))).toBe('allow');
    expect(action(deny({ command: '*' }), call('Bash', ['command']))).toBe('allow');
    expect(action(deny({ toString: '*' }), call('Bash', {}))).toBe('allow');
  });

  it('ANDs arguments and ORs a list of patterns', () => {
    const r = deny({ command: ['rm *', 'git push --force*'], cwd: '/repo*' });
    expect(action(r, call('Bash', { command: 'rm -rf x', cwd: '/repo/a' }))).toBe('deny');
    expect(action(r, call('Bash', { command: 'git push --force origin', cwd: '/repo' }))).toBe('deny');
    expect(action(r, call('Bash', { command: 'rm -rf x', cwd: '/tmp' }))).toBe('allow');
    expect(action(r, call('Bash', { command: 'rm -rf x' }))).toBe('allow');
  });

  it('matches wildcards against the whole value: * over slashes and spaces, ? one character', () => {
    const r = deny({ p: 'a?c*/z' });
    expect(action(r, call('T', { p: 'abc x/y/z' }))).toBe('deny');
    expect(action(r, call('T', { p: 'a😀c/z' }))).toBe('deny');
    expect(action(r, call('T', { p: 'ac/z' }))).toBe('allow');
    expect(action(r, call('T', { p: 'abc/z/' }))).toBe('allow');
    expect(action(deny({ p: 'rm' }), call('T', { p: 'rm -rf' }))).toBe('allow');
    expect(action(deny({ p: '' }), call('T', { p: '' }))).toBe('deny');
  });

  it('searches re: patterns with a linear-time engine', () => {
    const r = deny({ command: 're:\\brm\\s+-[a-z]*r' });
    expect(action(r, call('Bash', { command: 'cd x && rm -fr .' }))).toBe('deny');
    expect(action(r, call('Bash', { command: 'echo firm -r' }))).toBe('allow');
    expect(action(deny({ command: 're:^(a+)+$' }), call('Bash', { command: `${'a'.repeat(50_000)}!` }))).toBe('allow');
  });

  it('joins a string array with spaces and reads other values as JSON text', () => {
    expect(action(deny({ command: 'bash -lc *rm -rf*' }), call('shell', { command: ['bash', '-lc', 'cd /x && rm -rf /'] }))).toBe('deny');
    expect(action(deny({ timeout: '1?0' }), call('Bash', { timeout: 100 }))).toBe('deny');
    expect(action(deny({ force: 'true' }), call('Push', { force: true }))).toBe('deny');
    expect(action(deny({ v: 'null' }), call('T', { v: null }))).toBe('deny');
    expect(action(deny({ v: '*"a":1*' }), call('T', { v: { a: 1 } }))).toBe('deny');
  });

  it('reads a string input as ARG input, and only that', () => {
    const patch = '*** Begin Patch\n*** Update File: /etc/hosts\n';
    const custom: ProposedToolCall = { name: 'apply_patch', input: patch, text: patch };
    expect(action(deny({ input: '*File: /etc/*' }), custom)).toBe('deny');
    expect(action(deny({ patch: '*' }), custom)).toBe('allow');
    expect(action(deny({ input: 'x' }), call('T', { input: 'x' }))).toBe('deny');
  });

  it('matches a call whose text does not parse only with rules without when', () => {
    const broken = proposedToolCall('Bash', '{"command": "rm -rf /"');
    expect(broken.input).toBeUndefined();
    expect(action(deny({ command: '*' }), broken)).toBe('allow');
    const r = rulesOf({ tools: ['Bash'], when: { command: 'ls*' }, action: 'allow' }, { tools: ['Bash'], action: 'deny' });
    expect(action(r, broken)).toBe('deny');
  });

  it('reads text with NaN or Infinity as a lenient client would, so a when rule still decides it', () => {
    const lenient = proposedToolCall('Bash', '{"command":"rm -rf /","x":NaN,"y":-Infinity}');
    expect(lenient.input).toBeUndefined();
    expect(action(deny({ command: 'rm *' }), lenient)).toBe('deny');
    expect(action(deny({ command: 'ls *' }), lenient)).toBe('allow');
  });
});

describe('tool rules: arguments written to slip past', () => {
  const guard = rulesOf(
    { tools: ['Bash'], when: { command: ['rm *', '*rm -rf*'] }, action: 'deny', reason: 'destructive' },
    { tools: ['Bash'], when: { command: 'ls*' }, action: 'allow' },
    { tools: ['Bash'], action: 'deny' },
  );

  it('reads a repeated key as every client might: first or last value, the stricter wins', () => {
    expect(action(guard, proposedToolCall('Bash', '{"command":"ls","command":"rm -rf /"}'))).toBe('deny');
    expect(action(guard, proposedToolCall('Bash', '{"command":"rm -rf /","command":"ls"}'))).toBe('deny');
    expect(action(guard, proposedToolCall('Bash', '{"c\\u006fmmand":"rm -rf /","command":"ls"}'))).toBe('deny');
    const nested = rulesOf({ tools: ['*'], when: { '/a/b': 'bad' }, action: 'deny' });
    expect(action(nested, proposedToolCall('T', '{"a":{"b":"bad","b":"ok"}}'))).toBe('deny');
    expect(action(nested, proposedToolCall('T', '{"a":{"b":"ok"},"a":{"b":"bad"}}'))).toBe('deny');
    expect(action(nested, proposedToolCall('T', '{"a":{"b":"ok"},"z":1,"z":2}'))).toBe('allow');
  });

  it('normalises spacing, invisible characters and compatibility forms', () => {
    for (const command of ['  rm -rf /', 'rm\t-rf /', 'rm\u00a0-rf /', 'r\u200bm -rf /', 'ｒｍ -rf /', 'rm\n-rf /', 'echo x;\n  rm   -rf  /']) {
      expect(guard.decide(call('Bash', { command })), JSON.stringify(command)).toMatchObject({ action: 'deny', rule: 1 });
    }
    expect(action(guard, call('Bash', { command: 'ls -la' }))).toBe('allow');
    expect(action(guard, call('Bash', { command: 'ls\t-la' }))).toBe('allow');
  });

  it('reads an argv with an empty or spaced argument as the shell would run it', () => {
    const argv = rulesOf({ tools: ['shell'], when: { command: '*rm -rf*' }, action: 'deny' });
    expect(action(argv, call('shell', { command: ['rm', '', '-rf', '/'] }))).toBe('deny');
    expect(action(argv, call('shell', { command: ['rm', ' -rf', '/'] }))).toBe('deny');
    expect(action(argv, call('shell', { command: ['ls', '-rf'] }))).toBe('allow');
    // A pattern written with odd spacing still reads plain values as normalised.
    expect(action(rulesOf({ tools: ['Bash'], when: { command: 'rm  -rf*' }, action: 'deny' }), call('Bash', { command: 'rm -rf /' }))).toBe('deny');
  });

  it('never lets a normalised reading allow what the text as written does not', () => {
    // Written with a tab, `ls\t-la` does not match `ls *`; normalised it would. The call stays denied.
    const r = rulesOf({ tools: ['Bash'], when: { command: 'ls *' }, action: 'allow' }, { tools: ['Bash'], action: 'deny' });
    expect(action(r, call('Bash', { command: 'ls -la' }))).toBe('allow');
    expect(action(r, call('Bash', { command: 'ls\t-la' }))).toBe('deny');
  });

  it('reads __proto__ and deep nesting without harm', () => {
    const proto = rulesOf({ tools: ['*'], when: JSON.parse('{"__proto__":"x"}') as Record<string, string>, action: 'deny' });
    expect(action(proto, proposedToolCall('T', '{"__proto__":"x"}'))).toBe('deny');
    expect(action(proto, proposedToolCall('T', '{"__proto__":"y","__proto__":"x"}'))).toBe('deny');
    const deep = `{"a":1,"a":${'['.repeat(2000)}${']'.repeat(2000)}}`;
    const allowA = rulesOf({ tools: ['T'], when: { a: '1' }, action: 'allow' }, { tools: ['T'], action: 'deny' });
    expect(action(allowA, proposedToolCall('T', deep))).toBe('deny');
  });
});

describe('tool rules: denied outright', () => {
  it('is a deny without when, reached whatever the arguments', () => {
    const r = rulesOf(
      { tools: ['WebFetch'], action: 'deny' },
      { tools: ['Bash'], when: { command: 'ls*' }, action: 'allow' },
      { tools: ['Bash', 'Write'], action: 'deny' },
      { tools: ['Edit'], when: { file_path: '/etc/*' }, action: 'deny' },
      { tools: ['Edit', 'web_search'], action: 'deny' },
      { tools: ['Task'], when: { x: '*' }, action: 'approve' },
      { tools: ['Task'], action: 'deny' },
    );
    expect(['WebFetch', 'Write', 'Edit', 'web_search'].filter((n) => r.deniesOutright(n))).toEqual(['WebFetch', 'Write', 'Edit', 'web_search']);
    expect(['Bash', 'Task', 'Read'].some((n) => r.deniesOutright(n))).toBe(false);
    expect(rulesOf({ tools: ['*'], when: {}, action: 'deny' }).deniesOutright('x')).toBe(true);
  });

  it('holds when either policy denies outright', () => {
    const r = toolRulesOf(eff(policy('a', [{ tools: ['*'], action: 'allow' }]), policy('b', [{ tools: ['Bash'], action: 'deny' }])))!;
    expect(r.deniesOutright('Bash')).toBe(true);
    expect(r.deniesOutright('Read')).toBe(false);
  });
});

describe('refusalSentence', () => {
  it('names the tool, the reason, the policy and the rule', () => {
    expect(refusalSentence('Bash', { action: 'deny', policyId: 'dev', rule: 2, reason: 'no rm -rf' })).toBe(
      'agentgw refused the call to Bash: no rm -rf (policy dev, rule 2)',
    );
    expect(refusalSentence('Write', { action: 'deny', policyId: 'dev', rule: 1, reason: null })).toBe(
      'agentgw refused the call to Write: denied by policy (policy dev, rule 1)',
    );
  });
});

describe('tool rules: properties', () => {
  /** The wildcard as a backtracking regex over code points: the reference the linear matcher must agree with. */
  const reference = (pattern: string) =>
    new RegExp(`^${Array.from(pattern, (c) => (c === '*' ? '[^]*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/-]/g, '\\$&'))).join('')}$`, 'su');
  const alphabet = fc.constantFrom('a', 'b', '/', ' ', '😀', 'é');

  it('matches wildcards as the regex reading of * and ?', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(alphabet, fc.constantFrom('*', '?')), { maxLength: 8 }), fc.array(alphabet, { maxLength: 12 }), (p, v) => {
        const pattern = p.join('');
        const value = v.join('');
        const r = rulesOf({ tools: ['T'], when: { v: pattern }, action: 'deny' });
        const normalised = pattern.replace(/\s+/g, ' ').trim();
        const expected = reference(pattern).test(value) || reference(normalised).test(value.replace(/\s+/g, ' ').trim());
        expect(action(r, call('T', { v: value }))).toBe(expected ? 'deny' : 'allow');
      }),
      { numRuns: 500 },
    );
  });

  it('never decides a call less strictly for repeating a key', () => {
    const value = fc.constantFrom('ls', 'rm -rf /', ' rm  -rf x', 'cat a', 'git push --force');
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 4 }), (values) => {
        const r = rulesOf(
          { tools: ['Bash'], when: { command: 'rm *' }, action: 'deny' },
          { tools: ['Bash'], when: { command: ['ls*', 'cat *'] }, action: 'allow' },
          { tools: ['Bash'], action: 'approve' },
        );
        const text = `{${values.map((v) => `"command":${JSON.stringify(v)}`).join(',')}}`;
        const rank = { allow: 0, approve: 1, deny: 2 };
        const got = rank[action(r, proposedToolCall('Bash', text))];
        // JSON.parse keeps the last value, other parsers the first: the call is at least as strict as either.
        for (const v of [values[0]!, values.at(-1)!]) expect(got).toBeGreaterThanOrEqual(rank[action(r, call('Bash', { command: v }))]);
      }),
      { numRuns: 200 },
    );
  });
});
