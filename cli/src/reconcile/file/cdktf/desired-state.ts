import { readFileSync } from 'node:fs';
import { DeclarativeFile } from '@agentgw/gateway/contract';
import { kindOfSection } from '../../../kinds/index.js';
import type { Section } from '../../../kinds/descriptor.js';
import { keyOf } from '../../../kinds/values.js';
import { locateStackFile } from './locate-stack.js';
import { mapResources, type MappedEntry } from './map-resources.js';
import { CdktfStackError, type StackIssue, type StackJson } from './stack-json.js';

/** A synthesized stack as desired state, with the resource address each object came from. */
export interface StackState {
  file: string;
  content: DeclarativeFile;
  /** `agentgw_agent.bot` of `agents[2]`. */
  addresses: Record<Section, string[]>;
}

/** The identity the reconcile engine matches objects by: tenants and policies by id, agents by tenant and name. */
function identity(entry: MappedEntry): string {
  const d = kindOfSection(entry.section);
  return `${d.kind} ${keyOf(d, entry.value)}`;
}

function duplicates(entries: MappedEntry[]): StackIssue[] {
  const seen = new Map<string, string>();
  const issues: StackIssue[] = [];
  for (const e of entries) {
    const key = identity(e);
    const first = seen.get(key);
    if (first) issues.push({ address: e.address, message: `declares ${key} again (first declared by ${first})` });
    else seen.set(key, e.address);
  }
  return issues;
}

/** Converts an already parsed cdk.tf.json, keeping each object's resource address; `file` only names it in errors. */
export function stackState(stack: StackJson, file = 'cdk.tf.json'): StackState {
  const { entries, issues } = mapResources(stack);
  issues.push(...duplicates(entries));
  if (issues.length > 0) throw new CdktfStackError(file, issues);
  const section = (name: Section) => entries.filter((e) => e.section === name);
  const parsed = DeclarativeFile.safeParse({
    version: 1,
    tenants: section('tenants').map((e) => e.value),
    policies: section('policies').map((e) => e.value),
    agents: section('agents').map((e) => e.value),
    routes: section('routes').map((e) => e.value),
  });
  if (!parsed.success) {
    throw new CdktfStackError(
      file,
      parsed.error.issues.map((i) => {
        const [name, index] = i.path;
        const entry = typeof index === 'number' ? section(name as Section)[index] : undefined;
        return { address: entry?.address ?? 'stack', message: `${i.path.slice(2).join('.') || 'value'}: ${i.message}` };
      }),
    );
  }
  const addresses = { tenants: [], policies: [], agents: [], routes: [] } as Record<Section, string[]>;
  for (const name of Object.keys(addresses) as Section[]) addresses[name] = section(name).map((e) => e.address);
  return { file, content: parsed.data, addresses };
}

/** Converts an already parsed cdk.tf.json; `file` only names it in errors. */
export function desiredStateFromStackJson(stack: StackJson, file = 'cdk.tf.json'): DeclarativeFile {
  return stackState(stack, file).content;
}

/** Reads DIR's synthesized stack (see locateStackFile) with the resource address of each object. */
export function readStackState(dir: string): StackState {
  const file = locateStackFile(dir);
  let stack: StackJson;
  try {
    stack = JSON.parse(readFileSync(file, 'utf8')) as StackJson;
  } catch (err) {
    throw new Error(`${file} is not a synthesized stack: ${(err as Error).message}`);
  }
  return stackState(stack, file);
}

/**
 * Reads a synthesized CDKTF stack (DIR/cdk.tf.json, e.g. cdktf.out/stacks/NAME) and returns the desired
 * state in the declarative-file shape that `agentgw plan|apply|destroy` reconciles.
 * References between agentgw resources, variable defaults and locals are resolved here; errors name the resource address.
 */
export async function desiredStateFromCdktf(dir: string): Promise<DeclarativeFile> {
  return readStackState(dir).content;
}
