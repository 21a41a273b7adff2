// Whole streamed answers as each upstream wire format sends them, and the same streams cut short or corrupted: what a
// proxy, a crashed server or a broken connection in front of a provider delivers.
import { encodeMessage } from '../providers/bedrock/__fixtures__/encode-event-stream.js';
import { messageToSse, textReply } from './scripted-anthropic.js';
import { chatCompletionSse } from './scripted-openai.js';
import { responseSse, textResponse } from './scripted-responses.js';

export type Wire = 'openai-chat' | 'anthropic' | 'responses' | 'gemini' | 'bedrock-converse' | 'bedrock-claude';

/** One upstream answer, frame by frame. */
export interface WireStream {
  wire: Wire;
  frames: Buffer[];
  /** The frame that makes the answer complete (its terminal event). */
  terminal: number;
  /** The byte offset from which the answer is complete: the end of the terminal event's JSON. */
  completeAt: number;
  contentType: string;
}

export const ANSWER_TEXT = 'Hello there, how can I help you today? Ask me anything at all.';

const SSE = 'text/event-stream; charset=utf-8';
const EVENTSTREAM = 'application/vnd.amazon.eventstream';

/** SSE text split into its frames, each with its blank line. */
function sseFrames(text: string): string[] {
  return text.split(/(?<=\n\n)/).filter((f) => f.trim() !== '');
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The stream of text frames whose terminal frame is the first that `isTerminal` accepts. */
function sseStream(wire: Wire, frames: string[], isTerminal: (frame: string) => boolean): WireStream {
  const terminal = frames.findIndex(isTerminal);
  if (terminal === -1) throw new Error(`${wire}: no terminal frame`);
  const buffers = frames.map((f) => Buffer.from(f));
  const before = buffers.slice(0, terminal).reduce((n, b) => n + b.length, 0);
  // The terminal frame ends with its JSON, then the blank line.
  return { wire, frames: buffers, terminal, completeAt: before + buffers[terminal]!.length - 2, contentType: SSE };
}

function binaryStream(wire: Wire, frames: Buffer[], terminal: number): WireStream {
  const completeAt = frames.slice(0, terminal + 1).reduce((n, b) => n + b.length, 0);
  return { wire, frames, terminal, completeAt, contentType: EVENTSTREAM };
}

function converseEvent(type: string, payload: unknown): Buffer {
  return encodeMessage({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify(payload)));
}

/** An InvokeModelWithResponseStream chunk carrying one of Claude's own events. */
export function claudeChunk(eventJson: string): Buffer {
  return encodeMessage({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify({ bytes: Buffer.from(eventJson).toString('base64') })));
}

/** The whole answer `wire` streams for a request `body`. */
export function wholeStream(wire: Wire, body: any): WireStream {
  switch (wire) {
    case 'openai-chat':
      // role, deltas, the finish_reason chunk, the usage chunk, [DONE]
      return sseStream(wire, sseFrames(chatCompletionSse({ content: ANSWER_TEXT, usage: { prompt_tokens: 9, completion_tokens: 14 } }, { ...body, stream_options: { include_usage: true } })), (f) => f.includes('"finish_reason":"stop"'));
    case 'anthropic':
      return sseStream(wire, sseFrames(messageToSse(textReply(ANSWER_TEXT, { input_tokens: 9, output_tokens: 14 }), body)), (f) => f.startsWith('event: message_stop'));
    case 'responses':
      return sseStream(wire, sseFrames(responseSse(textResponse(ANSWER_TEXT, { input_tokens: 9, output_tokens: 14 }), body)), (f) => f.startsWith('event: response.completed'));
    case 'gemini': {
      const parts = pieces(ANSWER_TEXT, 12);
      const frames = parts.map((text, i) => {
        const last = i === parts.length - 1;
        const event = {
          candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
          usageMetadata: { promptTokenCount: 9, ...(last ? { candidatesTokenCount: 14 } : {}), totalTokenCount: last ? 23 : 9 },
          modelVersion: 'gemini-x',
          responseId: 'gemini-response-1',
        };
        return `data: ${JSON.stringify(event)}\n\n`;
      });
      return sseStream(wire, frames, (f) => f.includes('"finishReason"'));
    }
    case 'bedrock-converse': {
      const frames = [
        converseEvent('messageStart', { role: 'assistant' }),
        ...pieces(ANSWER_TEXT, 12).map((text) => converseEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text } })),
        converseEvent('contentBlockStop', { contentBlockIndex: 0 }),
        converseEvent('messageStop', { stopReason: 'end_turn' }),
        converseEvent('metadata', { usage: { inputTokens: 9, outputTokens: 14, totalTokens: 23 }, metrics: { latencyMs: 10 } }),
      ];
      return binaryStream(wire, frames, frames.length - 2);
    }
    case 'bedrock-claude': {
      const events = sseFrames(messageToSse(textReply(ANSWER_TEXT, { input_tokens: 9, output_tokens: 14 }), body));
      const frames = events.map((e) => claudeChunk(e.slice(e.indexOf('\ndata: ') + 7).trimEnd()));
      return binaryStream(wire, frames, frames.length - 1);
    }
  }
}

/** What the upstream sends: `bytes`, then it ends its response (`end`) or drops the connection (`drop`). */
export interface Delivery {
  bytes: Buffer;
  ending: 'end' | 'drop';
}

/** The stream up to byte `at` (before completeAt: the answer is never complete). */
export function cutAt(stream: WireStream, at: number, ending: Delivery['ending']): Delivery {
  return { bytes: Buffer.concat(stream.frames).subarray(0, at), ending };
}

export type Corruption = 'truncated-json' | 'control-char' | 'split-frame' | 'not-json';

/**
 * The whole stream with frame `index` (at most the terminal one) broken in a way that no parser may accept: its JSON cut
 * at `at` and the frame ended there, a control character put into it, a blank line put into it (two frames, neither
 * JSON), or a line of text in its place. For the binary event stream: a byte of the frame changed (`at`), or the frame
 * re-encoded, checksums right, around a payload that is not JSON.
 */
export function corrupt(stream: WireStream, index: number, how: Corruption, at: number): Delivery {
  const frames = stream.frames.slice();
  const frame = frames[index]!;
  if (stream.contentType === EVENTSTREAM) {
    if (how === 'truncated-json' || how === 'not-json') {
      const json = how === 'not-json' ? '<html>502 Bad Gateway</html>' : payloadJson(stream.wire, frame);
      const broken = how === 'not-json' ? json : json.slice(0, 1 + (at % (json.length - 1)));
      frames[index] = stream.wire === 'bedrock-claude' ? claudeChunk(broken) : encodeMessage({ ':event-type': eventTypeOf(frame), ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(broken));
    } else {
      const copy = Buffer.from(frame);
      const i = at % copy.length;
      copy[i] = copy[i]! ^ (how === 'control-char' ? 0x01 : 0x80);
      frames[index] = copy;
    }
    return { bytes: Buffer.concat(frames), ending: 'end' };
  }
  const text = frame.toString('utf8');
  const dataAt = text.startsWith('data: ') ? 6 : text.indexOf('\ndata: ') + 7;
  const jsonEnd = text.length - 2;
  const json = text.slice(dataAt, jsonEnd);
  const head = text.slice(0, dataAt);
  let broken: string;
  switch (how) {
    case 'truncated-json':
      broken = `${head}${json.slice(0, 1 + (at % (json.length - 1)))}\n\n`;
      break;
    case 'control-char': {
      const i = at % (json.length + 1);
      broken = `${head}${json.slice(0, i)}\u0001${json.slice(i)}\n\n`;
      break;
    }
    case 'split-frame': {
      const i = 1 + (at % (json.length - 1));
      broken = `${head}${json.slice(0, i)}\n\n${json.slice(i)}\n\n`;
      break;
    }
    case 'not-json':
      broken = `${head}<html>502 Bad Gateway</html>\n\n`;
      break;
  }
  frames[index] = Buffer.from(broken);
  return { bytes: Buffer.concat(frames), ending: 'end' };
}

function eventTypeOf(frame: Buffer): string {
  const at = frame.indexOf(':event-type');
  const length = frame.readUInt16BE(at + 12);
  return frame.toString('utf8', at + 14, at + 14 + length);
}

/** The JSON a binary frame carries (for a Claude chunk, Claude's own event). */
function payloadJson(wire: Wire, frame: Buffer): string {
  const headersLength = frame.readUInt32BE(4);
  const payload = frame.toString('utf8', 12 + headersLength, frame.length - 4);
  if (wire !== 'bedrock-claude') return payload;
  return Buffer.from((JSON.parse(payload) as { bytes: string }).bytes, 'base64').toString('utf8');
}
