import { FileError } from './file-error.js';
import type { SourceText } from './source-text.js';

/** Only variables with this prefix may reach a file: a file must not be able to read arbitrary secrets of the shell. */
export const VAR_PREFIX = 'AGENTGW_VAR_';
const OPEN = '${{';
const CLOSE = '}}';
const ENV_CALL = /^\s*env\s+"([^"]*)"\s*$/;
const USAGE = `\${{ env "${VAR_PREFIX}NAME" }}`;

/** One substitution: where it sits in the output and where it was written. */
interface Splice {
  outStart: number;
  outEnd: number;
  srcStart: number;
  srcEnd: number;
}

export interface Interpolated {
  text: string;
  /** Maps an offset of the interpolated text back to the written text (inside a substitution: its start). */
  toSource(offset: number): number;
}

function resolve(expr: string, env: NodeJS.ProcessEnv, source: SourceText, offset: number): string {
  const call = ENV_CALL.exec(expr);
  if (!call) throw new FileError(source.at(offset), `unsupported expression "${OPEN}${expr}${CLOSE}"; the only one supported is ${USAGE}`);
  const name = call[1];
  if (!name.startsWith(VAR_PREFIX)) {
    throw new FileError(source.at(offset), `"${name}" cannot be interpolated: only environment variables whose name starts with ${VAR_PREFIX} can`);
  }
  const value = env[name];
  if (value === undefined) throw new FileError(source.at(offset), `environment variable ${name} is not set`);
  return value;
}

/**
 * Replaces `${{ env "AGENTGW_VAR_NAME" }}` in the text before it is parsed (as decK does),
 * so it works in any position: unquoted numbers, quoted strings, flow maps.
 */
export function interpolate(source: SourceText, env: NodeJS.ProcessEnv): Interpolated {
  const text = source.text;
  const splices: Splice[] = [];
  let out = '';
  let cursor = 0;
  for (let at = text.indexOf(OPEN); at !== -1; at = text.indexOf(OPEN, cursor)) {
    const close = text.indexOf(CLOSE, at + OPEN.length);
    const lineEnd = text.indexOf('\n', at);
    if (close === -1 || (lineEnd !== -1 && close > lineEnd)) {
      throw new FileError(source.at(at), `"${OPEN}" is not closed with "${CLOSE}" on the same line; write ${USAGE}`);
    }
    const value = resolve(text.slice(at + OPEN.length, close), env, source, at);
    out += text.slice(cursor, at);
    splices.push({ outStart: out.length, outEnd: out.length + value.length, srcStart: at, srcEnd: close + CLOSE.length });
    out += value;
    cursor = close + CLOSE.length;
  }
  out += text.slice(cursor);
  return {
    text: out,
    toSource(offset: number): number {
      let shift = 0;
      for (const s of splices) {
        if (offset < s.outStart) break;
        if (offset < s.outEnd) return s.srcStart;
        shift = s.srcEnd - s.outEnd;
      }
      return offset + shift;
    },
  };
}
