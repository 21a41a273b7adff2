// How the requests an upstream sends on a call's SSE answer are told apart: every request event is routed to the call
// whose answer carried it, wherever the chunks of the stream split its events and their blank lines (LF, CRLF, CR), a
// large result before it included.
import { describe, expect, test } from 'vitest';
import { ServerRequestRoutes, withClientChannel } from './client-requests.js';

const request = (id: number) => ({ jsonrpc: '2.0', id, method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } });
const big = { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'x'.repeat(5_000) }] } };

/** The SSE text of the events with this line break. */
function sse(events: unknown[], nl: string): string {
  return events.map((e, i) => `id: e${i}${nl}data: ${JSON.stringify(e)}${nl}${nl}`).join('');
}

/** Streams `text` through the routes' fetch, cut at `cuts`, inside a call whose client answers `name`; answers what relay gets for each id. */
async function routed(text: string, cuts: number[], ids: number[]): Promise<unknown[]> {
  const routes = new ServerRequestRoutes();
  const bytes = new TextEncoder().encode(text);
  const bounds = [0, ...cuts, bytes.length];
  const inner = async () =>
    new Response(
      new ReadableStream({
        start(c) {
          for (let i = 1; i < bounds.length; i++) c.enqueue(bytes.slice(bounds[i - 1], bounds[i]));
          c.close();
        },
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    );
  const f = routes.fetch(inner);
  await withClientChannel({ ask: async () => ({ routed: 'to the call' }) as never, clean: (a) => a }, async () => {
    const reader = (await f('http://upstream.test/mcp', { method: 'POST' })).body!.getReader();
    while (!(await reader.read()).done);
  });
  // The call is over: only a route noted from its stream can answer now.
  await new Promise((r) => setTimeout(r, 0));
  const out: unknown[] = [];
  for (const id of ids) {
    out.push(await routes.relay(request(id) as never, id, new AbortController().signal, 'up').catch((e: Error) => e.message));
  }
  return out;
}

describe('server requests on a call stream', () => {
  for (const [name, nl] of [
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ] as const) {
    test(`every request is routed to its call, at every cut of the stream (${name})`, async () => {
      const text = sse([request(1), big, request(2)], nl);
      const firstEnd = text.indexOf(`${nl}${nl}`);
      // Each cut near the blank lines, and a few through the large result.
      const cuts = new Set<number>();
      for (let at = firstEnd - 3; at <= firstEnd + 5; at++) cuts.add(at);
      const lastStart = text.lastIndexOf('id: e2');
      for (let at = lastStart - 6; at <= lastStart + 2; at++) cuts.add(at);
      for (const cut of cuts) {
        expect(await routed(text, [cut], [1, 2]), `cut at ${cut}`).toEqual([{ routed: 'to the call' }, { routed: 'to the call' }]);
      }
      // One byte at a time, and the large result in many chunks.
      const bytes = new TextEncoder().encode(text).length;
      expect(await routed(text, Array.from({ length: bytes - 1 }, (_, i) => i + 1), [1, 2])).toEqual([{ routed: 'to the call' }, { routed: 'to the call' }]);
      expect(await routed(text, Array.from({ length: Math.floor(bytes / 100) }, (_, i) => (i + 1) * 100), [1, 2])).toEqual([{ routed: 'to the call' }, { routed: 'to the call' }]);
    });
  }

  test('an id the call stream never carried is not routed to it', async () => {
    const [got] = await routed(sse([request(1)], '\n'), [], [9]);
    expect(got).toMatch(/sent it while no call was running/);
  });
});
