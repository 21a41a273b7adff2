import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's node_modules: the READMEs that the installed packages ship. */
export const NODE_MODULES = fileURLToPath(new URL('../../../../../../node_modules', import.meta.url));

const README = /^readme(?:\.md|\.markdown)?$/i;

/** The README of every installed package (nested node_modules and scopes included), in path order. */
function readmeFiles(root: string): string[] {
  const files: string[] = [];
  const visitPackages = (dir: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of entries) {
      if (name.startsWith('.')) continue;
      const path = join(dir, name);
      if (name.startsWith('@')) {
        visitPackages(path);
        continue;
      }
      if (!existsSync(join(path, 'package.json'))) continue;
      const readme = readdirSync(path).sort().find((f) => README.test(f));
      if (readme && statSync(join(path, readme)).isFile()) files.push(join(path, readme));
      const nested = join(path, 'node_modules');
      if (existsSync(nested)) visitPackages(nested);
    }
  };
  visitPackages(root);
  return files;
}

/**
 * Blocks of a Markdown text: a fenced code block is one block, other text is split at blank lines. Badges, HTML and
 * tables stay in: agents send READMEs as they are.
 */
export function markdownBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  const flush = () => {
    const block = current.join('\n').trim();
    if (block.length > 0) blocks.push(block);
    current = [];
  };
  for (const line of text.split(/\r?\n/)) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && marker) {
      flush();
      fence = marker;
      current.push(line);
    } else if (fence !== null) {
      current.push(line);
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) {
        flush();
        fence = null;
      }
    } else if (line.trim() === '') {
      flush();
    } else {
      current.push(line);
    }
  }
  flush();
  return blocks;
}

export interface ProseBlock {
  /** The package folder, relative to node_modules. */
  source: string;
  text: string;
  code: boolean;
}

/** Every distinct block of at least `minChars` characters of every installed package's README. */
export function readmeBlocks(root = NODE_MODULES, minChars = 40): ProseBlock[] {
  const seenFiles = new Set<string>();
  const seenBlocks = new Set<string>();
  const out: ProseBlock[] = [];
  for (const file of readmeFiles(root)) {
    const text = readFileSync(file, 'utf8');
    const digest = createHash('sha1').update(text).digest('hex');
    if (seenFiles.has(digest)) continue;
    seenFiles.add(digest);
    const source = file.slice(root.length + 1).replace(/\/[^/]+$/, '');
    for (const block of markdownBlocks(text)) {
      if (block.length < minChars || seenBlocks.has(block)) continue;
      seenBlocks.add(block);
      out.push({ source, text: block, code: /^\s*(?:`{3,}|~{3,})/.test(block) });
    }
  }
  return out;
}
