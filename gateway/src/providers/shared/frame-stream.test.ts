import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FakeUpstream, streamReply } from '../__fixtures__/fake-upstream.js';
import { OpenAIFrameTranslator } from '../openai/openai-stream-frames.js';
import { providerIdentity } from './provider-identity.js';
import { StreamMeter } from './stream-meter.js';
import { UpstreamClient } from './upstream-client.js';

// Edge cases of the upstream side of a stream that recorded provider payloads do not reach.
const ERROR_PAGE_CHUNKS = 200;
const CHUNK = 'x'.repeat(64 * 1024);
let upstream: FakeUpstream;
let client: UpstreamClient;
const identity = providerIdentity('up', 'openai', []);

beforeAll(async () => {
  upstream = await FakeUpstream.start();
  client = new UpstreamClient(identity, `${upstream.url}/v1`, {});
});
afterAll(async () => {
  await client.close();
  await upstream.stop();
});

function open() {
  const meter = new StreamMeter(() => 1);
  return client.openFrames(
    { path: '/chat/completions', headers: {}, body: '{}', signal: new AbortController().signal },
    { meter, translator: new OpenAIFrameTranslator(identity, meter, true) },
  );
}

describe('frame streams', () => {
  test('a stream of events that are not JSON ends with upstream_bad_response, not an internal error', async () => {
    upstream.respond(streamReply(['data: ping\n\n', 'data: [DONE]\n\n']));
    let err: any;
    try {
      for await (const _ of await open()) {
        // drain
      }
    } catch (e) {
      err = e;
    }
    expect(err?.code).toBe('upstream_bad_response');
  });

  test('a huge error page is cut at its start: the call fails without reading it all', async () => {
    let written = 0;
    upstream.respond((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      const pump = () => {
        while (written < ERROR_PAGE_CHUNKS * CHUNK.length) {
          written += CHUNK.length;
          if (!res.write(CHUNK)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    const err: any = await open().catch((e: unknown) => e);
    expect(err?.code).toBe('upstream_unavailable');
    expect(written).toBeLessThan(ERROR_PAGE_CHUNKS * CHUNK.length);
  });
});
