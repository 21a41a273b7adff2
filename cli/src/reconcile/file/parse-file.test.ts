import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileError } from './file-error.js';
import { mergeSources } from './merge.js';
import { parseDeclarative } from './parse-file.js';
import { loadDeclarativeFiles } from './read-files.js';

const env = { AGENTGW_VAR_BUDGET: '250', AGENTGW_VAR_TEAM: 'support', HOME: '/root' };

function errorOf(fn: () => unknown): FileError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(FileError);
    return e as FileError;
  }
  throw new Error('expected a FileError');
}

const parse = (text: string) => parseDeclarative(text, 'f.yaml', env);

describe('parseDeclarative', () => {
  it('reads a valid file and fills the schema defaults', () => {
    const { content } = parse('version: 1\ntenants:\n  - id: acme\n    name: Acme\n');
    expect(content).toEqual({ version: 1, tenants: [{ id: 'acme', name: 'Acme' }], policies: [], agents: [], routes: [] });
  });

  it('pins invalid YAML to its line and column', () => {
    const e = errorOf(() => parse('version: 1\ntenants:\n  - id: acme\n    name: [unclosed\n'));
    expect(e.message).toMatch(/^f\.yaml:\d+:\d+: invalid YAML: /);
  });

  it('pins an unknown field to its key', () => {
    const e = errorOf(() => parse('version: 1\npolicies:\n  - id: p\n    monthly_budet: 5\n'));
    expect(e.message).toBe('f.yaml:4:5: unknown field "policies[0].monthly_budet" (check its spelling)');
  });

  it('pins a wrong value to the value', () => {
    const e = errorOf(() => parse('version: 1\npolicies:\n  - id: p\n    monthly_budget: -3\n'));
    expect([e.line, e.col]).toEqual([4, 21]);
    expect(e.detail).toMatch(/^policies\[0\]\.monthly_budget: must be >= 0/);
  });

  it('pins a nested enum error', () => {
    const e = errorOf(() => parse('version: 1\npolicies:\n  - id: p\n    rules:\n      pii: maybe\n'));
    expect([e.line, e.col]).toEqual([5, 12]);
    expect(e.detail).toMatch(/^policies\[0\]\.rules\.pii: /);
  });

  it('names a missing required field at its parent object', () => {
    const e = errorOf(() => parse('version: 1\nagents:\n  - name: bot\n'));
    expect(e.message).toBe('f.yaml:3:5: agents[0].tenant_id is required');
  });

  it('counts further problems in the same sentence', () => {
    const e = errorOf(() => parse('version: 2\ntenants:\n  - id: Bad Id\n    name: x\n'));
    expect(e.message).toMatch(/^f\.yaml:1:10: version: .* \(and 1 more problem\)$/);
  });

  it('rejects an empty file', () => {
    expect(errorOf(() => parse('# nothing\n')).message).toBe('f.yaml:1:1: the file is empty; it needs at least "version: 1"');
  });
});

describe('interpolation', () => {
  it('replaces AGENTGW_VAR_ variables in any position before parsing', () => {
    const { content } = parse(
      [
        'version: 1',
        'policies:',
        '  - id: p',
        '    monthly_budget: ${{ env "AGENTGW_VAR_BUDGET" }}',
        '    rules: { rpm: ${{ env "AGENTGW_VAR_BUDGET" }} }',
        '    labels:',
        '      team: "team-${{ env "AGENTGW_VAR_TEAM" }}"',
        "      plain: x-${{env \"AGENTGW_VAR_TEAM\"}}",
        '      budget: \'${{ env "AGENTGW_VAR_BUDGET" }}\'',
      ].join('\n'),
    );
    expect(content.policies[0].monthly_budget).toBe(250);
    expect(content.policies[0].rules?.rpm).toBe(250);
    expect(content.policies[0].labels).toEqual({ team: 'team-support', plain: 'x-support', budget: '250' });
  });

  it('reports later errors at the column as written, not as substituted', () => {
    const e = errorOf(() => parse('version: 1\npolicies:\n  - { id: "${{ env "AGENTGW_VAR_TEAM" }}", monthly_budget: -1 }\n'));
    expect([e.line, e.col]).toEqual([3, 60]);
  });

  it('refuses a variable without the AGENTGW_VAR_ prefix, naming file:line:col', () => {
    const e = errorOf(() => parse('version: 1\ntenants:\n  - id: acme\n    name: x ${{ env "HOME" }}\n'));
    expect(e.message).toBe('f.yaml:4:13: "HOME" cannot be interpolated: only environment variables whose name starts with AGENTGW_VAR_ can');
  });

  it('refuses an unset variable', () => {
    const e = errorOf(() => parse('version: 1\ntenants:\n  - id: acme\n    name: ${{ env "AGENTGW_VAR_NOPE" }}\n'));
    expect(e.message).toBe('f.yaml:4:11: environment variable AGENTGW_VAR_NOPE is not set');
  });

  it('refuses any other expression', () => {
    const e = errorOf(() => parse('version: 1\ntenants:\n  - id: acme\n    name: ${{ secrets.X }}\n'));
    expect(e.detail).toMatch(/^unsupported expression "\$\{\{ secrets\.X \}\}"/);
    expect([e.line, e.col]).toEqual([4, 11]);
  });

  it('refuses an expression that is not closed on its line', () => {
    const e = errorOf(() => parse('version: 1\ntenants:\n  - id: acme\n    name: ${{ env "AGENTGW_VAR_TEAM"\n'));
    expect(e.message).toMatch(/^f\.yaml:4:11: "\$\{\{" is not closed/);
  });
});

describe('loading several files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-file-'));
  writeFileSync(join(dir, 'a.yaml'), 'version: 1\ntenants:\n  - id: acme\n    name: Acme\n');
  writeFileSync(join(dir, 'b.yml'), 'version: 1\nagents:\n  - name: bot\n    tenant_id: acme\n');
  writeFileSync(join(dir, 'notes.txt'), 'ignored');
  mkdirSync(join(dir, 'dup'));
  writeFileSync(join(dir, 'dup', 'one.yaml'), 'version: 1\nagents:\n  - name: bot\n    tenant_id: acme\n');

  it('reads a directory of *.yaml and *.yml and merges them', async () => {
    const file = await loadDeclarativeFiles([dir], env);
    expect(file.tenants.map((t) => t.id)).toEqual(['acme']);
    expect(file.agents.map((a) => a.name)).toEqual(['bot']);
  });

  it('refuses an object declared in two files, naming both places', async () => {
    const err = await loadDeclarativeFiles([join(dir, 'b.yml'), join(dir, 'dup')], env).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileError);
    expect((err as Error).message).toBe(
      `${join(dir, 'dup', 'one.yaml')}:3:5: agent "acme/bot" is declared twice (first at ${join(dir, 'b.yml')}:3:5); each agent name may appear once per tenant`,
    );
  });

  it('refuses a duplicate within one file', () => {
    const a = parse('version: 1\npolicies:\n  - id: p\n  - id: p\n');
    expect(() => mergeSources([a])).toThrow('f.yaml:4:5: policy "p" is declared twice (first at f.yaml:3:5); each policy id may appear once');
  });

  it('refuses the reserved ownership label', () => {
    const a = parse('version: 1\ntenants:\n  - id: acme\n    name: A\n    labels: { managed_by: me }\n');
    expect(() => mergeSources([a])).toThrow(/^f\.yaml:5:15: the label "managed_by" is reserved/);
  });

  it('names a missing file in one sentence', async () => {
    await expect(loadDeclarativeFiles([join(dir, 'missing.yaml')], env)).rejects.toThrow(`cannot read ${join(dir, 'missing.yaml')}: no such file or directory`);
  });
});
