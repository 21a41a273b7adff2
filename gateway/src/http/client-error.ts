import type { Socket } from 'node:net';
import { anthropicErrorBody, isAnthropicPath } from '../contract/anthropic-error.js';
import { AgentgwError } from '../contract/index.js';
import { newRequestId } from './request-id.js';

/**
 * Answers a request Node's HTTP parser refused (malformed framing or headers) with CONTRACT's error body and a request
 * id, on both interfaces, then closes the connection: after a framing error nothing more on it can be trusted.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset or closed connection has nobody to answer; one whose current answer has started cannot take another (as
  // Node's own handler decides: earlier answers on a keep-alive connection do not count).
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable || current?.headersSent) {
    socket.destroy();
    return;
  }
  let status = 400;
  let error: AgentgwError;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    // Not a bad request: the client took too long to send one. Node answers 408 here, and so does the gateway.
    status = 408;
    error = new AgentgwError('invalid_header', 'The request was not received in time: send it again, whole.');
  } else if (err.code === 'HPE_HEADER_OVERFLOW') {
    error = new AgentgwError('invalid_header', 'The request headers are too large: send fewer or shorter headers.');
  } else {
    const what = (err as { reason?: string }).reason ?? err.code ?? 'malformed request';
    error = new AgentgwError('invalid_header', `The request is not valid HTTP/1.1 (${what}): check its Content-Length, Transfer-Encoding and header lines.`);
  }
  // Anthropic clients read Anthropic's error shape: the request line, when the parser got that far, names the path.
  const line = (err as { rawPacket?: Buffer }).rawPacket?.toString('latin1', 0, 64) ?? '';
  answerOnSocket(socket, status, error, isAnthropicPath(line.slice(line.indexOf(' ') + 1).split(' ')[0]!));
}

/**
 * Writes CONTRACT's error answer straight to a connection no request handler holds, and closes it: after a framing
 * error, or for a request Node hands to no handler (CONNECT).
 */
export function answerOnSocket(socket: Socket, status: number, error: AgentgwError, anthropic = false): void {
  const requestId = newRequestId();
  const body = anthropic ? anthropicErrorBody(error, requestId) : JSON.stringify(error.toBody());
  const reason = status === 408 ? 'Request Timeout' : status === 404 ? 'Not Found' : 'Bad Request';
  socket.write(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
  );
  // As Node does: a request handler may still hold the connection (its body broke mid-way), so it is closed here.
  socket.destroy();
}
