// Malformed HTTP (a broken request line, oversized headers, a request that never finished) is refused
// by Node's parser before Express sees it, and Node answers with a bare status line. This answers it
// with the error envelope instead, written straight to the socket since there is no response object.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ReelayError } from '@reelay/contracts';

function errorFor(code: string | undefined): ReelayError {
  if (code === 'HPE_HEADER_OVERFLOW') return new ReelayError('headers_too_large', 'The request headers are too large.');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ReelayError('request_timeout', 'The request was not sent in time.');
  return new ReelayError('invalid_request', 'The request is not valid HTTP.');
}

/** The raw HTTP/1.1 response for a parser error: the envelope, then the connection is closed. */
export function clientErrorResponse(code: string | undefined): string {
  const error = errorFor(code);
  const body = JSON.stringify(error.toEnvelope());
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${randomUUID()}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or a half-written response leaves nothing sensible to say.
    if (err.code === 'ECONNRESET' || !socket.writable || (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(err.code));
  });
}
