import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

interface Manifest {
  stacks?: Record<string, { synthesizedStackPath?: string }>;
}

/**
 * The cdk.tf.json to read: DIR/cdk.tf.json (a stack dir such as cdktf.out/stacks/NAME), the file itself,
 * or, for a cdktf.out dir holding exactly one stack, that stack.
 */
export function locateStackFile(dir: string): string {
  if (existsSync(dir) && statSync(dir).isFile()) return dir;
  const direct = join(dir, 'cdk.tf.json');
  if (existsSync(direct)) return direct;
  const manifestFile = [join(dir, 'manifest.json'), join(dir, 'cdktf.out', 'manifest.json')].find((f) => existsSync(f));
  if (!manifestFile) {
    throw new Error(`${direct} does not exist: run \`cdktf synth\` first and pass the stack dir (cdktf.out/stacks/NAME)`);
  }
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
  const stacks = Object.entries(manifest.stacks ?? {}).filter(([, s]) => s.synthesizedStackPath);
  if (stacks.length !== 1) {
    const names = stacks.map(([, s]) => relative(process.cwd(), dirname(join(dirname(manifestFile), s.synthesizedStackPath!))));
    throw new Error(`${manifestFile} lists ${stacks.length} stacks: pass one stack dir (${names.join(', ') || 'none synthesized'})`);
  }
  return join(dirname(manifestFile), stacks[0][1].synthesizedStackPath!);
}
