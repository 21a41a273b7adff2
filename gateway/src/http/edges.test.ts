import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

/** Sends raw bytes on a connection of its own and reads until the server closes it. */
function rawExchange(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(5_000, () => reject(new Error(`no answer; got so far: ${text}`)));
  });
}

function bodyOf(answer: string): unknown {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
}

describe('requests Node would answer without a body, or not at all', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  test('an HTTP/1.1 request without a Host header gets a 400 with CONTRACT body', async () => {
    const answer = await rawExchange(gw.url, 'GET /v1/models HTTP/1.1\r\nAuthorization: Bearer agk_x\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/x-request-id: req_/);
    expect(bodyOf(answer)).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_header', param: 'host' } });
  });

  test('a CONNECT request is answered 404 with CONTRACT body', async () => {
    const answer = await rawExchange(gw.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(bodyOf(answer)).toMatchObject({ error: { code: 'route_not_found' } });
  });
});

describe('a request sent on an idle keep-alive connection as shutdown begins', () => {
  test('is answered 503 with CONTRACT body, not reset', async () => {
    const gw = await startTestGateway();
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    const key = (await admin.agent('acme', 'bot')).api_key as string;
    const { hostname, port } = new URL(gw.url);
    const body = JSON.stringify({ model: 'mock/m', messages: [{ role: 'user', content: 'hello hello' }] });
    const request = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // Ten keep-alive connections, each having served one request, idle when shutdown begins.
    const sockets: Array<{ socket: Socket; text: () => string; ended: Promise<string> }> = [];
    for (let i = 0; i < 10; i++) {
      const socket = connect(Number(port), hostname);
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (text += d));
      const ended = new Promise<string>((resolve) => {
        socket.on('close', () => resolve(text));
        socket.on('error', () => undefined);
      });
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.write(request);
      while (!/HTTP\/1\.1 200[\s\S]*\r\n\r\n\{[\s\S]*\}$/.test(text)) await new Promise((r) => setTimeout(r, 5));
      text = '';
      sockets.push({ socket, text: () => text, ended });
    }
    const closing = gw.close();
    for (const s of sockets) s.socket.write(request);
    const answers = await Promise.all(sockets.map((s) => s.ended));
    await closing;
    for (const answer of answers) {
      expect(answer).toMatch(/^HTTP\/1\.1 503 /);
      expect(answer).toMatch(/connection: close/i);
      expect(bodyOf(answer)).toMatchObject({ error: { code: 'maintenance' } });
    }
  });
});
