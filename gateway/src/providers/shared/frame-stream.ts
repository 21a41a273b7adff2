// A ChatStream fed straight from the upstream connection: each network chunk is parsed into SSE events as it arrives and
// turned into frames synchronously; the consumer's for-await takes them from a queue. No stream objects or generator
// chains between the socket and the client, and nothing held back: a frame is ready the moment its chunk is parsed.
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import type { CancelSignal, ChatStream, Usage } from '../spec.js';
import type { ProviderIdentity } from './provider-identity.js';
import type { StreamMeter } from './stream-meter.js';
import { DEFAULT_UPSTREAM_BODY_BYTES, bytesAfterLastLine, upstreamBodyTooLarge } from './upstream-body-limit.js';
import { midStreamFailure, upstreamFailure } from './upstream-failure.js';
import { ErrorBody, retryAfterOf, upstreamStatusError } from './upstream-status-error.js';

/** Turns upstream events into client frames: `data: ...\n\n` strings, or null to drop the event. Throws on a stream error. */
export interface FrameTranslator {
  event(event: EventSourceMessage): string | null;
  /**
   * After the last event, once every frame before it was delivered: a closing frame to add (or null); throws when the
   * stream was empty or broken.
   */
  end(): string | null;
  /** A frame reached the consumer (frames parsed but never delivered, say to a client that left, are not billed). */
  delivered(frame: string): void;
  finishReason(): string | null;
}

/** Frames queued before the upstream is paused (the client reads slower than the upstream writes). */
const HIGH_WATER = 256;

type Step = IteratorResult<string, undefined>;
const DONE: Step = { done: true, value: undefined };

export class FrameStream implements ChatStream, AsyncIterator<string, undefined> {
  private readonly queue: string[] = [];
  private head = 0;
  private finished = false;
  /** The upstream ended normally: once the queue is empty, the translator's closing frame comes last. */
  private completed = false;
  private ended = false;
  private failure: unknown = undefined;
  private waiter: ((step: Step) => void) | null = null;
  private failWaiter: ((err: unknown) => void) | null = null;
  private abortUpstream: ((err: Error) => void) | null = null;
  private resumeUpstream: (() => void) | null = null;
  private paused = false;
  private iterated = false;
  private readonly decoder = new StringDecoder('utf8');
  private readonly parser = createParser({ onEvent: (e) => this.onEvent(e) });
  /** Bytes read since the last complete event: about what the parser holds (limits.upstream_body_mb caps it). */
  private sinceEvent = 0;
  private eventInChunk = false;
  private readonly onAbort = () => this.stop(true);

  private constructor(
    private readonly identity: ProviderIdentity,
    private readonly signal: CancelSignal,
    private readonly meter: StreamMeter,
    private readonly translator: FrameTranslator,
    private readonly maxEventBytes: number,
  ) {}

  /**
   * POSTs to the upstream and resolves once it answered 2xx, so a failure before the first byte can fall back to the next
   * target; rejects with the gateway's error for any other status or a connection failure.
   */
  static open(
    pool: Dispatcher,
    request: { path: string; headers: Record<string, string>; body: string | Uint8Array },
    parts: { identity: ProviderIdentity; signal: CancelSignal; meter: StreamMeter; translator: FrameTranslator; maxEventBytes?: number },
  ): Promise<FrameStream> {
    const stream = new FrameStream(parts.identity, parts.signal, parts.meter, parts.translator, parts.maxEventBytes ?? DEFAULT_UPSTREAM_BODY_BYTES);
    return stream.start(pool, request);
  }

  private start(pool: Dispatcher, request: { path: string; headers: Record<string, string>; body: string | Uint8Array }): Promise<FrameStream> {
    const { signal, identity } = this;
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      signal.addEventListener('abort', this.onAbort, { once: true });
      let status = 0;
      const errorBody = new ErrorBody();
      let opened = false;
      let retryAfter: string | undefined;
      const self = this;
      pool.dispatch(
        { path: request.path, method: 'POST', headers: request.headers, body: request.body },
        {
          onConnect(abort: (err: Error) => void) {
            self.abortUpstream = abort;
            if (signal.aborted) abort(new Error('aborted'));
          },
          onHeaders(statusCode: number, headers: unknown, resume: () => void) {
            status = statusCode;
            if (status === 429) retryAfter = retryAfterOf(headers);
            self.resumeUpstream = resume;
            if (status >= 200 && status < 300) {
              opened = true;
              resolve(self);
            }
            return true;
          },
          onData(chunk: Buffer) {
            if (!opened) {
              // A failed call's body only feeds an error message: keep its start, drop the connection rather than read on.
              if (errorBody.add(chunk)) {
                self.cleanup();
                reject(upstreamStatusError(identity, status, errorBody.text(), retryAfter));
                self.finished = true;
                self.abortUpstream?.(new Error('error body cut short'));
                return false;
              }
              return true;
            }
            return self.feed(chunk);
          },
          onComplete() {
            if (!opened) {
              self.cleanup();
              reject(upstreamStatusError(identity, status, errorBody.text(), retryAfter));
              return;
            }
            self.complete();
          },
          onError(err: Error) {
            if (!opened) {
              self.cleanup();
              // Headers already said the call failed: that status is the answer, whatever broke after it.
              if (status >= 300 && !signal.aborted) reject(upstreamStatusError(identity, status, errorBody.text(), retryAfter));
              else reject(upstreamFailure(identity, err, signal));
              return;
            }
            self.fail(err);
          },
          onUpgrade() {},
          onBodySent() {},
        } as unknown as Dispatcher.DispatchHandler,
      );
    });
  }

  // --- upstream side ---

  /** Returns false to pause the upstream while the client is behind. */
  private feed(chunk: Buffer): boolean {
    if (this.finished) return true;
    this.eventInChunk = false;
    this.parser.feed(this.decoder.write(chunk));
    this.sinceEvent = this.eventInChunk ? bytesAfterLastLine(chunk) : this.sinceEvent + chunk.length;
    if (this.sinceEvent > this.maxEventBytes && this.failure === undefined) this.failure = upstreamBodyTooLarge(this.identity, this.maxEventBytes, 'event');
    if (this.failure !== undefined) {
      // The upstream said it failed: stop reading; the frames before the failure are still delivered.
      this.stop(true);
      return true;
    }
    this.wake();
    this.paused = this.queue.length - this.head >= HIGH_WATER;
    return !this.paused;
  }

  private onEvent(event: EventSourceMessage): void {
    this.eventInChunk = true;
    if (this.finished || this.failure !== undefined) return;
    try {
      const frame = this.translator.event(event);
      if (frame !== null) this.queue.push(frame);
    } catch (err) {
      this.failure = upstreamFailure(this.identity, err, this.signal);
    }
  }

  private complete(): void {
    if (this.finished) return;
    const tail = this.decoder.end();
    if (tail) this.parser.feed(tail);
    // A last event without its blank line is still an event: one cut inside its data fails to parse, as it must.
    this.parser.feed('\n\n');
    this.completed = true;
    this.stop(false);
  }

  private fail(err: unknown): void {
    if (this.finished) return;
    if (this.failure === undefined) this.failure = midStreamFailure(this.identity, err, this.signal);
    this.stop(false);
  }

  /** Ends the stream; `abort` also drops the upstream connection (client gone, or the consumer stopped early). */
  private stop(abort: boolean): void {
    if (this.finished) return;
    this.finished = true;
    this.cleanup();
    if (abort) this.abortUpstream?.(new Error('aborted'));
    this.wake();
  }

  private cleanup(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }

  private wake(): void {
    const waiter = this.waiter;
    if (waiter === null) return;
    const step = this.take();
    if (step === null) return;
    this.waiter = null;
    const failWaiter = this.failWaiter;
    this.failWaiter = null;
    if (step === FAILED) failWaiter!(this.failure);
    else waiter(step);
  }

  // --- consumer side ---

  /** The next step if one is ready: a frame, the end, or FAILED; null when the consumer must wait. */
  private take(): Step | typeof FAILED | null {
    // Nothing more after an abort, even frames already parsed from the last network chunk.
    if (this.signal.aborted) return DONE;
    if (this.head < this.queue.length) {
      const value = this.queue[this.head++]!;
      if (this.head === this.queue.length) {
        this.queue.length = 0;
        this.head = 0;
      }
      if (this.paused && this.queue.length - this.head < HIGH_WATER / 2) {
        this.paused = false;
        this.resumeUpstream?.();
      }
      this.translator.delivered(value);
      return { done: false, value };
    }
    if (this.failure !== undefined) return FAILED;
    if (this.completed && !this.ended) {
      this.ended = true;
      try {
        const closing = this.translator.end();
        if (closing !== null) return { done: false, value: closing };
      } catch (err) {
        this.failure = upstreamFailure(this.identity, err, this.signal);
        return FAILED;
      }
    }
    return this.finished ? DONE : null;
  }

  next(): Promise<Step> {
    const step = this.take();
    if (step === FAILED) {
      const err = this.failure;
      this.failure = undefined;
      this.finished = true;
      return Promise.reject(err);
    }
    if (step !== null) return Promise.resolve(step);
    return new Promise((resolve, reject) => {
      this.waiter = resolve;
      this.failWaiter = (err) => {
        this.failure = undefined;
        reject(err);
      };
    });
  }

  takeReady(): string | null {
    if (this.signal.aborted || this.head >= this.queue.length) return null;
    const ready = this.head === 0 ? this.queue : this.queue.slice(this.head);
    for (const frame of ready) this.translator.delivered(frame);
    const out = ready.join('');
    this.queue.length = 0;
    this.head = 0;
    if (this.paused) {
      this.paused = false;
      this.resumeUpstream?.();
    }
    return out;
  }

  /** The consumer stopped early (break): release the upstream connection. */
  return(): Promise<Step> {
    this.stop(true);
    return Promise.resolve(DONE);
  }

  [Symbol.asyncIterator](): AsyncIterator<string, undefined> {
    if (this.iterated) throw new TypeError('A ChatStream can be iterated only once.');
    this.iterated = true;
    return this;
  }

  usage(): Usage {
    return this.meter.usage();
  }

  finishReason(): string | null {
    return this.translator.finishReason();
  }
}

const FAILED = Symbol('failed');
