// One SSE frame of a Chat Completions stream -> its chunk: what every stream translator reads chat streams with.
import { AgentgwError } from '../contract/errors.js';
import type { OpenAIChatCompletionChunk } from '../providers/openai-format.js';

/** The chunk of the frame at buf[from, end) (its data lines joined), or null for a frame without data or `[DONE]`. */
export function chatChunkOfFrame(buf: string, from: number, end: number): OpenAIChatCompletionChunk | null {
  let data = '';
  let lines = 0;
  while (from < end) {
    let eol = buf.indexOf('\n', from);
    if (eol === -1 || eol > end) eol = end;
    if (buf.startsWith('data:', from)) {
      const at = buf.charCodeAt(from + 5) === 32 ? from + 6 : from + 5;
      data = lines++ === 0 ? buf.slice(at, eol) : `${data}\n${buf.slice(at, eol)}`;
    }
    from = eol + 1;
  }
  if (lines === 0 || data === '[DONE]') return null;
  try {
    return JSON.parse(data) as OpenAIChatCompletionChunk;
  } catch {
    throw new AgentgwError('upstream_bad_response', 'The upstream sent a stream chunk that is not valid JSON.');
  }
}
