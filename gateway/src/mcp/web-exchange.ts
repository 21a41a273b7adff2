// Node's request and response to and from the web-standard Request and Response the MCP SDKs' HTTP serving speaks:
// used by the session front (mcp-front.ts) and the stateless revision (stateless.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';

export function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Headers that describe this hop's connection, not the request. */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect']);

/** The request as a web-standard Request: its method and headers, and what `init` adds (a body, a signal). */
export function toWebRequest(req: IncomingMessage, init: RequestInit = {}): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/mcp'}`, { method: req.method, headers, ...init });
}

/** Writes a web-standard Response (JSON, or an SSE stream until it ends or the client leaves). */
export async function pipe(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    headers[k] = v;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  // The headers, an answer ready at once and the end of the stream go out in one write; a stream's headers within a turn.
  // The connection is corked, never the response: Node 22 keeps a corked response's chunks in a buffer of its own that
  // end() leaves behind (see SseWriter). A corked socket keeps writes in order, and end() uncorks it fully.
  const socket = res.socket;
  socket?.cork();
  res.flushHeaders();
  setImmediate(() => {
    if (socket && socket.writableCorked > 0) socket.uncork();
  });
  const reader = response.body.getReader();
  const gone = () => void reader.cancel().catch(() => undefined);
  res.once('close', gone);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await drained(res);
    }
  } catch {
    // The client left, or the session closed under the stream: nothing more to send.
  } finally {
    res.off('close', gone);
    if (!res.writableEnded) res.end();
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
