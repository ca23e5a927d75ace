// Malformed HTTP (a broken request line, oversized headers, a request that never finished) is refused
// by Node's parser before Express sees it, and Node answers with a bare status line. This answers it
// with the error envelope instead, written straight to the socket since there is no response object.
// So is CONNECT, which Node hands to the server's 'connect' event and, with no listener, answers by
// closing the socket without a word.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ReelayError } from '@reelay/contracts';
import type { AllowedMethods } from './methods.js';

function errorFor(code: string | undefined): ReelayError {
  if (code === 'HPE_HEADER_OVERFLOW') return new ReelayError('headers_too_large', 'The request headers are too large.');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new ReelayError('request_timeout', 'The request was not sent in time.');
  return new ReelayError('invalid_request', 'The request is not valid HTTP.');
}

/** The raw HTTP/1.1 response for a parser error: the envelope, then the connection is closed. */
export function clientErrorResponse(code: string | undefined): string {
  return rawResponse(errorFor(code));
}

function rawResponse(error: ReelayError): string {
  const body = JSON.stringify(error.toEnvelope());
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${randomUUID()}`,
    ...Object.entries(error.headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** CONNECT's answer: 405 with Allow on a path a route serves, 400 for a proxy's host:port target. */
export function connectResponse(target: string, allowed: AllowedMethods): string {
  const methods = target.startsWith('/') ? allowed(target.split('?')[0]) : [];
  if (methods.length)
    return rawResponse(
      new ReelayError('method_not_allowed', `CONNECT is not allowed here; use ${methods.join(' or ')}.`, {
        headers: { Allow: methods.join(', ') },
      }),
    );
  return rawResponse(new ReelayError('invalid_request', 'CONNECT is not supported: this server is not a proxy.'));
}

export function answerClientErrors(server: Server, allowed: AllowedMethods): void {
  server.on('connect', (req: { url?: string }, socket: Duplex) => {
    // Whatever the client sent after its headers (a tunnel's first bytes) is not read: the answer
    // goes out and the connection is closed.
    socket.on('error', () => socket.destroy());
    socket.end(connectResponse(req.url ?? '', allowed));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or a half-written response leaves nothing sensible to say.
    if (
      err.code === 'ECONNRESET' ||
      !socket.writable ||
      (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent
    ) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(err.code));
  });
}
