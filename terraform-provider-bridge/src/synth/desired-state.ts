import { readFileSync } from 'node:fs';
import { DeclarativeFile } from '@agentgw/gateway/contract';
import { locateStackFile } from './locate-stack.js';
import { mapResources, type MappedEntry } from './map-resources.js';
import { CdktfStackError, type StackIssue, type StackJson } from './stack-json.js';

/** The identity the reconcile engine matches objects by: tenants and policies by id, agents by tenant and name. */
function identity(entry: MappedEntry): string {
  const v = entry.value;
  return entry.section === 'agents' ? `agent ${String(v.tenant_id)}/${String(v.name)}` : `${entry.section.slice(0, -1)} ${String(v.id)}`;
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

/** Converts an already parsed cdk.tf.json; `file` only names it in errors. */
export function desiredStateFromStackJson(stack: StackJson, file = 'cdk.tf.json'): DeclarativeFile {
  const { entries, issues } = mapResources(stack);
  issues.push(...duplicates(entries));
  if (issues.length > 0) throw new CdktfStackError(file, issues);
  const section = (name: MappedEntry['section']) => entries.filter((e) => e.section === name).map((e) => e.value);
  const parsed = DeclarativeFile.safeParse({ version: 1, tenants: section('tenants'), policies: section('policies'), agents: section('agents') });
  if (!parsed.success) {
    throw new CdktfStackError(
      file,
      parsed.error.issues.map((i) => {
        const [name, index] = i.path;
        const entry = typeof index === 'number' ? entries.filter((e) => e.section === name)[index] : undefined;
        return { address: entry?.address ?? 'stack', message: `${i.path.slice(2).join('.') || 'value'}: ${i.message}` };
      }),
    );
  }
  return parsed.data;
}

/**
 * Reads a synthesized CDKTF stack (DIR/cdk.tf.json, e.g. cdktf.out/stacks/NAME) and returns the desired
 * state in the declarative-file shape that `agentgw plan|apply|destroy` reconciles.
 * References between agentgw resources, variable defaults and locals are resolved here; errors name the resource address.
 */
export async function desiredStateFromCdktf(dir: string): Promise<DeclarativeFile> {
  const file = locateStackFile(dir);
  let stack: StackJson;
  try {
    stack = JSON.parse(readFileSync(file, 'utf8')) as StackJson;
  } catch (err) {
    throw new Error(`${file} is not a synthesized stack: ${(err as Error).message}`);
  }
  return desiredStateFromStackJson(stack, file);
}
