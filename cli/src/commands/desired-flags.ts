import type { Command } from 'commander';
import { collect } from './flag-values.js';

/** Where plan, apply and destroy read the desired state from. */
export function addDesiredFlags(cmd: Command): Command {
  return cmd
    .option('-f, --file <path>', 'declarative file or directory of *.yaml (repeatable)', collect)
    .option('--cdktf <dir>', 'desired state from a synthesized CDKTF stack (cdktf.out/stacks/NAME)');
}
