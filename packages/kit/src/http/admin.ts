// The operator API's conventions (admin port, behind the admin token): every route answers JSON, and
// every failure — a thrown ProblemError, a bad token, an unknown path, a crash — is a problem
// document with the request id, handled once here for every module's admin routes.
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ProblemError } from '../errors';
import { renderProblem, sendProblem } from './problem';
import { requestIdOf } from './request-id';

export interface AdminReply {
  status: number;
  body?: unknown;
}

/** An admin route from an async handler: its reply is sent as JSON, anything it throws becomes a problem document. */
export function adminRoute(handler: (req: Request) => Promise<AdminReply>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    handler(req).then(({ status, body }) => (body === undefined ? res.status(status).end() : res.status(status).json(body)), next);
  };
}

export function adminNotFound(): RequestHandler {
  return (req, _res, next) => {
    next(new ProblemError('not-found', { detail: `No admin endpoint at ${req.method} ${req.path}.`, remediation: 'Check the path; the `sightline` command lists what the admin API offers.' }));
  };
}

export function adminErrorHandler(typeBase: () => string, logger: Logger): ErrorRequestHandler {
  return (error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    const problem = renderProblem(bodyParserProblem(error) ?? error, requestIdOf(res), typeBase());
    if (problem.unexpected) logger.error({ err: error, requestId: requestIdOf(res) }, 'admin request failed');
    sendProblem(res, problem);
  };
}

function bodyParserProblem(error: unknown): ProblemError | null {
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') return new ProblemError('invalid-request', { detail: 'The request body is not valid JSON.', remediation: 'Send a well-formed JSON body.' });
  if (type === 'entity.too.large') return new ProblemError('payload-too-large', { detail: 'The request body is too large for the admin API.', remediation: 'Send a smaller body (imports go in batches).' });
  return null;
}
