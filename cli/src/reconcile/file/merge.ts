import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { CliError } from '../../errors.js';
import { agentIdentity } from '../state/identity.js';
import { MANAGED_LABEL } from '../state/ownership.js';
import { FileError, formatLocation } from './file-error.js';
import { formatPath, type Locator, type Path } from './locate.js';

/** Desired state from one place: a YAML file (with a locator for line:col) or a CDKTF app (without). */
export interface DesiredSource {
  file: string;
  content: DeclarativeFile;
  locator?: Locator;
}

type Section = 'tenants' | 'policies' | 'agents';

const NOUN: Record<Section, string> = { tenants: 'tenant', policies: 'policy', agents: 'agent' };

function identity(section: Section, item: { id?: string; tenant_id?: string | null; name?: string }): string {
  return section === 'agents' ? agentIdentity(item.tenant_id ?? '', item.name ?? '') : (item.id ?? '');
}

function where(source: DesiredSource, path: Path, key?: string): string {
  if (source.locator) return formatLocation(source.locator.locate(path, key));
  return `${source.file} (${formatPath(key === undefined ? path : [...path, key])})`;
}

function sourceError(source: DesiredSource, path: Path, detail: string, key?: string): Error {
  if (source.locator) return new FileError(source.locator.locate(path, key), detail);
  return new CliError(`${where(source, path, key)}: ${detail}`);
}

/** One desired state from several sources; an object declared twice (in one file or across files) is an error. */
export function mergeSources(sources: DesiredSource[]): DeclarativeFile {
  const out: DeclarativeFile = { version: 1, tenants: [], policies: [], agents: [] };
  const seen = new Map<string, string>();
  for (const source of sources) {
    for (const section of ['tenants', 'policies', 'agents'] as const) {
      source.content[section].forEach((item, index) => {
        if (item.labels && MANAGED_LABEL in item.labels) {
          throw sourceError(
            source,
            [section, index, 'labels'],
            `the label "${MANAGED_LABEL}" is reserved: agentgw sets it on the objects apply creates, so remove it from ${section}[${index}]`,
            MANAGED_LABEL,
          );
        }
        const id = identity(section, item);
        const key = `${section}:${id}`;
        const first = seen.get(key);
        if (first) {
          const unique = section === 'agents' ? 'agent name may appear once per tenant' : `${NOUN[section]} id may appear once`;
          throw sourceError(source, [section, index], `${NOUN[section]} "${id}" is declared twice (first at ${first}); each ${unique}`);
        }
        seen.set(key, where(source, [section, index]));
      });
    }
    out.tenants.push(...source.content.tenants);
    out.policies.push(...source.content.policies);
    out.agents.push(...source.content.agents);
  }
  return out;
}
