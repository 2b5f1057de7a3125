// Requests Node's HTTP parser refuses before any route sees them (headers over 16 KB, malformed
// HTTP): they still get the spec's problem document, a request id and the RateLimit headers,
// instead of Node's bare status line. Such a refusal is not counted against any budget (nobody is
// known yet, and it cost nothing), so the headers state the per-address budget for callers without
// a valid key, unspent.
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { UNAUTHENTICATED_REQUESTS_PER_MINUTE } from '@sightline/proto-schemas';
import { ProblemError } from '../errors';
import { renderProblem } from './problem';
import { REQUEST_ID_HEADER } from './request-id';

/** A `clientError` listener for the public server: answers a problem document, then closes. */
export function problemOnClientError(publicUrl: () => string): (error: Error & { code?: string }, socket: Duplex) => void {
  return (error, socket) => {
    // A reset or half-closed socket cannot be answered; anything else that is not a parse error
    // (a timeout) is left to close as Node closes it.
    if (error.code === 'ECONNRESET' || !socket.writable || !error.code?.startsWith('HPE_')) {
      socket.destroy();
      return;
    }
    const problem =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? new ProblemError('headers-too-large', {
            detail: 'The request headers are larger than 16 KB in all.',
            remediation: 'Send fewer or shorter headers (cookies are a common cause); an API key and a Content-Type are all the API needs.',
          })
        : new ProblemError('invalid-request', {
            detail: 'The request is not well-formed HTTP/1.1.',
            remediation: 'Send a well-formed HTTP request; check the client library or proxy in between.',
          });
    const requestId = randomUUID();
    const { document } = renderProblem(problem, requestId, publicUrl());
    const body = JSON.stringify(document);
    const headers = [
      `HTTP/1.1 ${document.status} ${document.title}`,
      'Content-Type: application/problem+json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `${REQUEST_ID_HEADER}: ${requestId}`,
      `RateLimit-Limit: ${UNAUTHENTICATED_REQUESTS_PER_MINUTE}`,
      `RateLimit-Remaining: ${UNAUTHENTICATED_REQUESTS_PER_MINUTE}`,
      'RateLimit-Reset: 60',
      'Connection: close',
    ];
    socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
  };
}
