// The CLI's help, every command of it: a description, lines that fit HELP_WIDTH, no empty defaults.
import type { Command } from 'commander';
import { describe, expect, test } from 'vitest';
import { buildProgram, HELP_WIDTH } from './program.js';

function commands(c: Command, path: string[] = []): { name: string; cmd: Command }[] {
  const name = [...path, c.name()].join(' ');
  return [{ name, cmd: c }, ...c.commands.flatMap((s) => commands(s, [...path, c.name()]))];
}

/** What `agentgw ... --help` prints, the help text added after the options included. */
function helpOf(cmd: Command): string {
  let out = '';
  cmd.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) });
  cmd.exitOverride();
  try {
    cmd.outputHelp();
  } catch {
    // exitOverride
  }
  return out;
}

describe('agentgw --help, for every command', () => {
  const all = commands(buildProgram());

  test('walks the whole tree', () => {
    expect(all.map((c) => c.name)).toEqual(expect.arrayContaining(['agentgw serve', 'agentgw plan', 'agentgw usage', 'agentgw traces show']));
  });

  test('every command says what it does', () => {
    expect(all.filter((c) => !c.cmd.description().trim()).map((c) => c.name)).toEqual([]);
  });

  test(`no help line is ${HELP_WIDTH} characters or longer`, () => {
    const long = all.flatMap((c) => helpOf(c.cmd).split('\n').filter((l) => l.length >= HELP_WIDTH).map((l) => `${c.name}: ${l}`));
    expect(long).toEqual([]);
  });

  test('no empty default is shown: plan -f has no "(default: [])"', () => {
    const empty = all.flatMap((c) => helpOf(c.cmd).split('\n').filter((l) => /\(default: (\[\]|""|\{\})\)/.test(l)).map((l) => `${c.name}: ${l.trim()}`));
    expect(empty).toEqual([]);
    expect(helpOf(all.find((c) => c.name === 'agentgw plan')!.cmd)).toMatch(/-f, --file/);
  });
});
