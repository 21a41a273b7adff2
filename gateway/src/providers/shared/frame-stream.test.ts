import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OpenAIFrameTranslator } from '../openai/openai-stream-frames.js';
import { providerIdentity } from './provider-identity.js';
import { StreamMeter } from './stream-meter.js';
import { UpstreamClient } from './upstream-client.js';

// Edge cases of the upstream side of a stream that recorded provider payloads do not reach.
let server: http.Server;
let base: string;
let errorBytesWritten = 0;
const ERROR_PAGE_CHUNKS = 200;
const CHUNK = 'x'.repeat(64 * 1024);

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    if (req.url === '/v1/not-json') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: ping\n\ndata: [DONE]\n\n');
    } else if (req.url === '/v1/big-error') {
      res.writeHead(500, { 'content-type': 'text/html' });
      let n = 0;
      const pump = () => {
        while (n < ERROR_PAGE_CHUNKS) {
          n++;
          errorBytesWritten += CHUNK.length;
          if (!res.write(CHUNK)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => undefined);
      pump();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function open(path: string) {
  const identity = providerIdentity('up', 'openai', []);
  const client = new UpstreamClient(identity, base, {});
  const meter = new StreamMeter(() => 1);
  const stream = client.openFrames({ path, headers: {}, body: '{}', signal: new AbortController().signal }, { meter, translator: new OpenAIFrameTranslator(identity, meter, true) });
  return { client, stream };
}

describe('frame streams', () => {
  test('a stream of events that are not JSON ends with upstream_bad_response, not an internal error', async () => {
    const { client, stream } = open('/not-json');
    let err: any;
    try {
      for await (const _ of await stream) {
        // drain
      }
    } catch (e) {
      err = e;
    }
    expect(err?.code).toBe('upstream_bad_response');
    await client.close();
  });

  test('a huge error page is cut at its start: the call fails without reading it all', async () => {
    const { client, stream } = open('/big-error');
    const err: any = await stream.catch((e: unknown) => e);
    expect(err?.code).toBe('upstream_unavailable');
    expect(errorBytesWritten).toBeLessThan(ERROR_PAGE_CHUNKS * CHUNK.length);
    await client.close();
  });
});
