// A tiny message catalog for the bus tests, independent of the product catalog.
// Types are `test.<anything>.ping` (payload {n: number}) and `test.<anything>.pong`
// (payload {text: string}), so each test can use types of its own on a shared exchange.
// RPC methods ending in `.echo` take and return {text: string}; other methods take anything.
import type { Envelope, MessageValidator } from '../src/bus/types';

const TYPE = /^test\.[a-z0-9-]+\.(ping|pong)$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkPayload(kind: string, payload: unknown): string | null {
  if (!isObject(payload)) return 'payload must be an object';
  if (kind === 'ping' && typeof payload.n !== 'number') return 'payload.n must be a number';
  if (kind === 'pong' && typeof payload.text !== 'string') return 'payload.text must be a string';
  return null;
}

function checkText(value: unknown): string | null {
  return isObject(value) && typeof value.text === 'string' ? null : 'must be {text: string}';
}

export const testValidator: MessageValidator = {
  validateEnvelope(envelope: Envelope): string | null {
    const match = TYPE.exec(envelope.type);
    if (!match) return `unknown message type ${envelope.type}`;
    if (envelope.version !== 1) return `unsupported version ${envelope.version}`;
    if (typeof envelope.source !== 'string' || envelope.source === '') return 'source is required';
    if (typeof envelope.occurred_at !== 'string' || Number.isNaN(Date.parse(envelope.occurred_at))) return 'occurred_at must be a date-time';
    return checkPayload(match[1] ?? '', envelope.payload);
  },
  validateRpcRequest: (method, request) => (method.endsWith('.echo') ? checkText(request) : null),
  validateRpcResponse: (method, response) => (method.endsWith('.echo') ? checkText(response) : null),
};

/** Accepts anything: lets a test put a schema-invalid message on the bus. */
export const permissiveValidator: MessageValidator = {
  validateEnvelope: () => null,
  validateRpcRequest: () => null,
  validateRpcResponse: () => null,
};
