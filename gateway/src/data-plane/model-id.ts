// The model a client names reaches upstream URLs (Gemini's `models/{id}:generateContent`, Bedrock's and Azure's paths),
// where a `..` segment, a percent-escape or a backslash can make the upstream serve a model other than the one the
// allow-list matched. Such ids are refused before any allow-list; real ids (`gpt-4.1`, `llama3.1:8b`,
// `anthropic.claude-3-5-sonnet-20241022-v2:0`, `accounts/fireworks/models/x`, `@cf/meta/x`) never hold them.
import { AgentgwError } from '../contract/index.js';

/** A percent sign, a backslash, whitespace, a control or an invisible formatting character. */
const FORBIDDEN_CHAR = /[%\\\s\p{Cc}\p{Cf}\p{Z}]/u;

/** What is wrong with a model id, or null when it may be routed. */
export function modelIdProblem(model: string): string | null {
  const bad = FORBIDDEN_CHAR.exec(model);
  if (bad) {
    const c = bad[0];
    if (c === '%') return 'a percent-escape';
    if (c === '\\') return 'a backslash';
    return `the character U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} (whitespace, control or invisible)`;
  }
  for (const segment of model.split('/')) {
    if (segment === '.' || segment === '..') return `a "${segment}" path segment`;
    if (segment === '') return 'an empty path segment';
  }
  return null;
}

/** The id as an error message may show it: printable ASCII, the rest escaped, and not too long. */
function shown(model: string): string {
  const cut = model.length > 200 ? `${model.slice(0, 200)}...` : model;
  return `"${cut.replace(/[^\x20-\x7e]|["\\]/g, (c) => (c === '"' || c === '\\' ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))}"`;
}

/** Throws CONTRACT's 400 for a model id that could name another model upstream than the one the checks saw. */
export function checkModelId(model: string): void {
  const problem = modelIdProblem(model);
  if (problem === null) return;
  throw new AgentgwError(
    'validation_failed',
    `The model id ${shown(model)} holds ${problem}: name the model as "provider/model" or an alias, without "." or ".." path segments, empty segments, percent-escapes, backslashes, whitespace or control characters.`,
    { param: 'model' },
  );
}
