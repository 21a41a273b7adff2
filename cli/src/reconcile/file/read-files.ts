import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { CliError } from '../../errors.js';
import { mergeSources, type DesiredSource } from './merge.js';
import { parseDeclarative } from './parse-file.js';

const YAML_FILE = /\.ya?ml$/i;

/** Each `-f` argument is a file, or a directory whose *.yaml / *.yml files are read in name order. */
export async function expandPaths(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    let info;
    try {
      info = await stat(p);
    } catch {
      throw new CliError(`cannot read ${p}: no such file or directory`);
    }
    if (!info.isDirectory()) {
      out.push(p);
      continue;
    }
    const names = (await readdir(p)).filter((n) => YAML_FILE.test(n)).sort();
    if (names.length === 0) throw new CliError(`the directory ${p} holds no *.yaml or *.yml file`);
    out.push(...names.map((n) => join(p, n)));
  }
  return out;
}

/** Reads, interpolates and validates each file. */
export async function readDeclarativeFiles(paths: string[], env: NodeJS.ProcessEnv = process.env): Promise<DesiredSource[]> {
  const files = await expandPaths(paths);
  const parsed: DesiredSource[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw new CliError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'EISDIR' ? 'it is a directory' : (e as Error).message}`);
    }
    parsed.push(parseDeclarative(text, file, env));
  }
  return parsed;
}

/** Reads, interpolates, validates and merges the files into one desired state. */
export async function loadDeclarativeFiles(paths: string[], env: NodeJS.ProcessEnv = process.env): Promise<DeclarativeFile> {
  return mergeSources(await readDeclarativeFiles(paths, env));
}
