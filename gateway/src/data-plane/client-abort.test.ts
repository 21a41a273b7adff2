import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { isAgentgwError } from '../contract/index.js';
import { ClientAbort } from './client-abort.js';

/** A response whose 'close' can be fired by the test, finished or not. */
function fakeResponse(finished: boolean): ServerResponse & EventEmitter {
  const res = new EventEmitter() as ServerResponse & EventEmitter;
  Object.defineProperty(res, 'writableFinished', { get: () => finished });
  return res;
}

describe('ClientAbort', () => {
  it('aborts with client_closed when the connection closes before the answer is finished, calling each listener once', () => {
    const res = fakeResponse(false);
    const abort = new ClientAbort(res);
    const first = vi.fn();
    const removed = vi.fn();
    abort.addEventListener('abort', first);
    abort.addEventListener('abort', removed);
    abort.removeEventListener('abort', removed);
    res.emit('close');
    res.emit('close');
    expect(abort.aborted).toBe(true);
    expect(isAgentgwError(abort.reason) && abort.reason.code).toBe('client_closed');
    expect(first).toHaveBeenCalledTimes(1);
    expect(removed).not.toHaveBeenCalled();
    const late = vi.fn();
    abort.addEventListener('abort', late);
    expect(late).not.toHaveBeenCalled();
  });

  it('runs listeners as an AbortSignal does: in order, once each, skipping one removed meanwhile, past one that throws', async () => {
    const res = fakeResponse(false);
    const abort = new ClientAbort(res);
    const order: string[] = [];
    const third = () => order.push('third');
    const thrown: unknown[] = [];
    const onUncaught = (e: unknown) => thrown.push(e);
    process.prependListener('uncaughtException', onUncaught);
    try {
      const first = () => {
        order.push('first');
        abort.removeEventListener('abort', third);
      };
      abort.addEventListener('abort', first);
      abort.addEventListener('abort', first);
      abort.addEventListener('abort', () => {
        order.push('throws');
        throw new Error('listener failed');
      });
      abort.addEventListener('abort', third);
      abort.addEventListener('abort', () => order.push('last'));
      abort.abort('gone');
      expect(order).toEqual(['first', 'throws', 'last']);
      await new Promise((r) => setImmediate(r));
      expect(thrown).toHaveLength(1);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('does not abort when the connection closes after the answer was finished', () => {
    const res = fakeResponse(true);
    const abort = new ClientAbort(res);
    const listener = vi.fn();
    abort.addEventListener('abort', listener);
    res.emit('close');
    expect(abort.aborted).toBe(false);
    expect(listener).not.toHaveBeenCalled();
  });

  it('stops watching the connection once disposed', () => {
    const res = fakeResponse(false);
    const abort = new ClientAbort(res);
    expect(res.listenerCount('close')).toBe(1);
    abort.dispose();
    expect(res.listenerCount('close')).toBe(0);
    res.emit('close');
    expect(abort.aborted).toBe(false);
  });

  it('is accepted by undici as a request signal', async () => {
    const { MockAgent } = await import('undici');
    const agent = new MockAgent();
    agent.disableNetConnect();
    agent.get('http://upstream.test').intercept({ path: '/slow', method: 'GET' }).reply(200, 'late').delay(5_000);
    const res = fakeResponse(false);
    const abort = new ClientAbort(res);
    const pending = agent.request({ origin: 'http://upstream.test', path: '/slow', method: 'GET', signal: abort as unknown as AbortSignal });
    res.emit('close');
    await expect(pending).rejects.toSatisfy((e: unknown) => isAgentgwError(e) && e.code === 'client_closed');
    await agent.close();
  });
});
