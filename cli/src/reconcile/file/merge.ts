import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { CliError } from '../../errors.js';
import { KIND_LIST } from '../../kinds/index.js';
import type { Attrs } from '../../kinds/descriptor.js';
import { keyOf } from '../../kinds/values.js';
import type { PlanProblemSite } from '../diff/plan-error.js';
import { MANAGED_LABEL } from '../state/ownership.js';
import { FileError, formatLocation } from './file-error.js';
import { formatPath, type Locator, type Path } from './locate.js';

/** Desired state from one place: a YAML file (with a locator for line:col) or a CDKTF app (which names resource addresses). */
export interface DesiredSource {
  file: string;
  content: DeclarativeFile;
  locator?: Locator;
  /** Where a path of the content came from, for sources without a locator (e.g. `cdk.tf.json: agentgw_agent.bot.policy_id`). */
  describe?: (path: Path) => string;
}

/** The merged desired state, and where each of its objects was declared. */
export interface Desired {
  content: DeclarativeFile;
  /** `file:line:col` (or a resource address) of an object or one of its fields; undefined when unknown. */
  where(site: PlanProblemSite): string | undefined;
}

function where(source: DesiredSource, path: Path, key?: string): string {
  const full = key === undefined ? path : [...path, key];
  if (source.locator) return formatLocation(source.locator.locate(path, key));
  if (source.describe) return source.describe(full);
  return `${source.file} (${formatPath(full)})`;
}

function sourceError(source: DesiredSource, path: Path, detail: string, key?: string): Error {
  if (source.locator) return new FileError(source.locator.locate(path, key), detail);
  return new CliError(`${where(source, path, key)}: ${detail}`);
}

/** One desired state from several sources; an object declared twice (in one file or across files) is an error. */
export function mergeDesired(sources: DesiredSource[]): Desired {
  const content = { version: 1, ...Object.fromEntries(KIND_LIST.map((d) => [d.section, []])) } as unknown as DeclarativeFile;
  const declared = new Map<string, { source: DesiredSource; path: Path }>();
  for (const source of sources) {
    for (const d of KIND_LIST) {
      (source.content[d.section] as Attrs[]).forEach((item, index) => {
        const path: Path = [d.section, index];
        const labels = item.labels as Record<string, string> | undefined;
        if (labels && MANAGED_LABEL in labels) {
          throw sourceError(
            source,
            [...path, 'labels'],
            `the label "${MANAGED_LABEL}" is reserved: agentgw sets it on the objects apply creates, so remove it from ${d.section}[${index}]`,
            MANAGED_LABEL,
          );
        }
        const id = keyOf(d, item);
        const key = `${d.kind}:${id}`;
        const first = declared.get(key);
        if (first) {
          const unique = d.identity.length > 1 ? `${d.kind} ${d.identity.at(-1)} may appear once per ${d.identity.slice(0, -1).join(' and ').replace(/_id$/, '')}` : `${d.kind} id may appear once`;
          throw sourceError(source, path, `${d.kind} "${id}" is declared twice (first at ${where(first.source, first.path)}); each ${unique}`);
        }
        declared.set(key, { source, path });
      });
    }
    for (const d of KIND_LIST) (content[d.section] as Attrs[]).push(...(source.content[d.section] as Attrs[]));
  }
  return {
    content,
    where(site) {
      const found = declared.get(`${site.kind}:${site.id}`);
      if (!found) return undefined;
      return where(found.source, site.field ? [...found.path, site.field] : found.path);
    },
  };
}

/** One desired state from several sources (see mergeDesired). */
export function mergeSources(sources: DesiredSource[]): DeclarativeFile {
  return mergeDesired(sources).content;
}
