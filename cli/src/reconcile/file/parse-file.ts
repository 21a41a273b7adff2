import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { parseDocument } from 'yaml';
import { FileError } from './file-error.js';
import { interpolate } from './interpolate.js';
import { Locator } from './locate.js';
import { SourceText } from './source-text.js';
import { validateDeclarative } from './validate.js';

export interface ParsedFile {
  file: string;
  content: DeclarativeFile;
  locator: Locator;
}

/** YAML text -> interpolated -> parsed -> validated declarative file, every error pinned to file:line:col as written. */
export function parseDeclarative(text: string, file: string, env: NodeJS.ProcessEnv): ParsedFile {
  const source = new SourceText(file, text);
  const interpolated = interpolate(source, env);
  const doc = parseDocument(interpolated.text, { prettyErrors: false, uniqueKeys: true });
  const locator = new Locator(source, doc, interpolated.toSource);
  const err = doc.errors[0];
  if (err) throw new FileError(locator.at(err.pos[0]), `invalid YAML: ${err.message.split('\n')[0]}`);
  if (doc.contents === null) throw new FileError(locator.at(0), 'the file is empty; it needs at least "version: 1"');
  const content = validateDeclarative(doc.toJS({ maxAliasCount: 1000 }), locator);
  return { file, content, locator };
}
