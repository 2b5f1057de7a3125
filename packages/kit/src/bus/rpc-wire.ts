// The RPC reply format and the server-side dispatch both drivers share.
import type { Logger } from 'pino';
import { ProblemError } from '../errors';
import type { BusTelemetry } from './bus-telemetry';
import {
  InvalidMessageError,
  RpcRemoteError,
  type MessageValidator,
  type RemoteProblem,
  type RpcHandler,
} from './types';

type Reply = { ok: true; result: unknown } | { ok: false; problem: RemoteProblem };

/** Turns whatever a handler threw into a problem; only ProblemErrors say more than "internal". */
export function toRemoteProblem(err: unknown): RemoteProblem {
  if (err instanceof ProblemError) {
    const problem: RemoteProblem = { kind: err.kind, status: err.status, detail: err.message, remediation: err.remediation };
    if (err.allowed) problem.allowed = [...err.allowed];
    if (err.extra) problem.extra = err.extra;
    if (err.headers) problem.headers = err.headers;
    return problem;
  }
  return internalProblem('The service failed to answer this request.');
}

function internalProblem(detail: string): RemoteProblem {
  return { kind: 'internal', status: 500, detail, remediation: 'Retry later; if it persists, report it with the request id.' };
}

export interface RpcServerContext {
  methods: Record<string, RpcHandler>;
  validator: MessageValidator;
  logger: Logger;
  service: string;
  /** Measures and traces each request (bus-telemetry.ts). */
  telemetry?: BusTelemetry;
}

/** A request body the in-process caller already parsed and checked with the server's own validator. */
export interface CheckedRequest {
  parsed: unknown;
  checkedBy: MessageValidator;
}

/**
 * Runs one request and returns the reply body; never throws. `headers` carry the caller's trace
 * context. `checked`: the caller's parsed, validated copy (in-process only), used instead of parsing
 * and checking the body again when it was checked by this server's validator.
 */
export async function answerRpc(method: string, body: string, ctx: RpcServerContext, headers: Record<string, unknown> = {}, checked?: CheckedRequest): Promise<string> {
  const answer = async (): Promise<{ body: string; status: number }> => {
    const reply = await runRpc(method, body, ctx, checked?.checkedBy === ctx.validator ? checked.parsed : undefined);
    try {
      return { body: JSON.stringify(reply), status: reply.ok ? 200 : reply.problem.status };
    } catch {
      // Only a problem's `extra` can still fail here.
      return { body: JSON.stringify({ ok: false, problem: internalProblem('The service produced an unreadable answer.') }), status: 500 };
    }
  };
  if (!ctx.telemetry) return (await answer()).body;
  const known = Object.prototype.hasOwnProperty.call(ctx.methods, method);
  return (await ctx.telemetry.rpcServer(ctx.service, method, known, headers, answer)).body;
}

async function runRpc(method: string, body: string, ctx: RpcServerContext, checkedRequest: unknown): Promise<Reply> {
  const handler = Object.prototype.hasOwnProperty.call(ctx.methods, method) ? ctx.methods[method] : undefined;
  if (!handler) {
    return {
      ok: false,
      problem: { kind: 'not-implemented', status: 501, detail: `Method ${method} is not served by ${ctx.service}.`, remediation: 'Check the method name.' },
    };
  }
  let request: unknown = checkedRequest;
  if (request === undefined) {
    try {
      request = JSON.parse(body);
    } catch {
      return { ok: false, problem: invalidRequest(method, 'the body is not JSON') };
    }
    const requestProblem = ctx.validator.validateRpcRequest(method, request);
    if (requestProblem !== null) return { ok: false, problem: invalidRequest(method, requestProblem) };
  }
  let result: unknown;
  try {
    result = await handler(request);
  } catch (err) {
    if (!(err instanceof ProblemError)) {
      // Logged here with the details; the caller only learns that it failed.
      ctx.logger.error({ method, err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) }, 'bus: rpc handler failed');
    }
    return { ok: false, problem: toRemoteProblem(err) };
  }
  // Round-trip through JSON first so the check sees what the caller will get.
  let wire: unknown;
  try {
    wire = result === undefined ? undefined : JSON.parse(JSON.stringify(result));
  } catch (err) {
    ctx.logger.error({ method, err: String(err) }, 'bus: rpc result is not serialisable');
    return { ok: false, problem: internalProblem('The service produced an unreadable answer.') };
  }
  const responseProblem = ctx.validator.validateRpcResponse(method, wire);
  if (responseProblem !== null) {
    ctx.logger.error({ method, problem: responseProblem }, 'bus: rpc response fails its schema');
    return { ok: false, problem: internalProblem('The service produced an invalid answer.') };
  }
  return { ok: true, result: wire };
}

function invalidRequest(method: string, why: string): RemoteProblem {
  return { kind: 'invalid-request', status: 400, detail: `Request for ${method} is invalid: ${why}`, remediation: 'Fix the request and retry.' };
}

/**
 * Caller side: the request body, checked in its JSON form (`wire`, which an in-process server may
 * use as is); throws InvalidMessageError before sending.
 */
export function encodeRpcRequest(method: string, request: unknown, validator: MessageValidator): { body: string; wire: unknown } {
  let body: string | undefined;
  try {
    body = JSON.stringify(request);
  } catch (err) {
    throw new InvalidMessageError(`RPC ${method} request is not serialisable: ${String(err)}`);
  }
  const wire: unknown = body === undefined ? null : JSON.parse(body);
  const problem = validator.validateRpcRequest(method, wire);
  if (problem !== null) throw new InvalidMessageError(`RPC ${method} request is invalid: ${problem}`);
  return { body: body ?? 'null', wire };
}

/** Caller side: the result, or RpcRemoteError carrying the remote problem. */
export function readRpcReply(method: string, body: string, validator: MessageValidator): unknown {
  let reply: unknown;
  try {
    reply = JSON.parse(body);
  } catch {
    throw new RpcRemoteError(method, internalProblem('The reply is not JSON.'));
  }
  if (typeof reply !== 'object' || reply === null) throw new RpcRemoteError(method, internalProblem('The reply is malformed.'));
  const r = reply as Record<string, unknown>;
  if (r.ok === true) {
    const problem = validator.validateRpcResponse(method, r.result);
    if (problem !== null) throw new RpcRemoteError(method, internalProblem(`The reply fails its schema: ${problem}`));
    return r.result;
  }
  if (isRemoteProblem(r.problem)) throw new RpcRemoteError(method, r.problem);
  throw new RpcRemoteError(method, internalProblem('The reply is malformed.'));
}

function isRemoteProblem(value: unknown): value is RemoteProblem {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.kind === 'string' && typeof v.status === 'number' && typeof v.detail === 'string';
}
