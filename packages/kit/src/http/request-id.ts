import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

export const REQUEST_ID_HEADER = 'Sightline-Request-Id';

/** Every response carries a request id; a well-formed one from the caller is kept for tracing. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.header(REQUEST_ID_HEADER);
  const id = incoming && /^[A-Za-z0-9._-]{8,128}$/.test(incoming) ? incoming : randomUUID();
  res.locals['requestId'] = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  next();
}

export function requestIdOf(res: Response): string {
  return String(res.locals['requestId'] ?? '');
}
