import { DeclarativeFile } from '@agentgw/gateway/contract';
import { FileError } from './file-error.js';
import { formatPath, type Locator, type Path } from './locate.js';

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

function valueAt(data: unknown, path: Path): unknown {
  let v: unknown = data;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg as string];
  }
  return v;
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

/** One sentence per issue, naming the field as written in the file. */
function describe(issue: Issue, data: unknown): string {
  const where = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
    const field = formatPath([...issue.path, issue.keys[0]]);
    return `unknown field "${field}" (check its spelling)`;
  }
  if (issue.code === 'invalid_type' && valueAt(data, issue.path) === undefined) {
    return `${where} is required`;
  }
  if (where === '') return lowerFirst(issue.message);
  return `${where}: ${lowerFirst(issue.message)}`;
}

/** Validates with the contract's DeclarativeFile schema; the first problem becomes a FileError at its line and column. */
export function validateDeclarative(data: unknown, locator: Locator): DeclarativeFile {
  const res = DeclarativeFile.safeParse(data);
  if (res.success) return res.data;
  const issues = res.error.issues as unknown as Issue[];
  const first = issues[0];
  const loc = first.code === 'unrecognized_keys' && first.keys?.length ? locator.locate(first.path, first.keys[0]) : locator.locate(first.path);
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  throw new FileError(loc, describe(first, data) + more);
}
