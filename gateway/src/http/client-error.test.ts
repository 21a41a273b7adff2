import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

let gw: TestGateway;
let auth: Record<string, string>;
beforeAll(async () => {
  gw = await startTestGateway();
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  // Requests that are authorised, so that each interface reads the body the parser breaks on.
  auth = { '/api/tenants': `Bearer ${gw.adminKey}`, '/v1/chat/completions': `Bearer ${(await admin.agent('acme', 'bot')).api_key}` };
});
afterAll(async () => gw?.close());

/** Sends raw bytes and reads the answer until the server closes the connection. */
function raw(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  const { hostname, port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (text += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head!.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n\r\n')) });
    });
  });
}

describe('requests Node cannot parse get CONTRACT error bodies on both interfaces', () => {
  const cases: Array<[string, string]> = [
    ['a Content-Length that is not a number', 'Content-Length: abc\r\n\r\n{}'],
    ['both Content-Length and chunked encoding', 'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'],
    ['a chunk size that is not hex', 'Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'],
    ['a header line without a colon', 'Not a header\r\n\r\n'],
  ];
  for (const path of ['/api/tenants', '/v1/chat/completions']) {
    test.each(cases)(`${path}: %s`, async (_name, rest) => {
      const res = await raw(`POST ${path} HTTP/1.1\r\nHost: gw\r\nAuthorization: ${auth[path]}\r\nContent-Type: application/json\r\n${rest}`);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['x-request-id']).toMatch(/^req_/);
      expect(Object.keys(res.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_header', param: null });
      expect(res.body.error.message).toMatch(/^The request is not valid HTTP\/1\.1 \(.+\): check/);
    });
  }

  test('headers over the size limit', async () => {
    const res = await raw(`GET /api/tenants HTTP/1.1\r\nHost: gw\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_header', message: 'The request headers are too large: send fewer or shorter headers.' });
  });
});
