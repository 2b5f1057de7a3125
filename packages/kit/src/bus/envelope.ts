// Building, encoding and decoding envelopes. Both drivers go through these functions, so a
// message is serialised to JSON and schema-checked the same way whichever driver carries it.
import { randomUUID } from 'node:crypto';
import { HEADER } from './names';
import {
  InvalidMessageError,
  type DeadLetter,
  type Envelope,
  type MessageValidator,
  type PublishInput,
} from './types';

export interface EncodedEnvelope {
  /** The envelope as a consumer will see it (after the JSON round trip). */
  envelope: Envelope;
  body: string;
}

export function buildEnvelope<P>(input: PublishInput<P>): Envelope<P> {
  return {
    id: input.id ?? randomUUID(),
    type: input.type,
    version: input.version ?? 1,
    occurred_at: input.occurred_at ?? new Date().toISOString(),
    workspace_id: input.workspace_id ?? null,
    website_id: input.website_id ?? null,
    source: input.source,
    payload: input.payload,
  };
}

/** Serialises and validates the wire form; throws InvalidMessageError before anything is sent. */
export function encodeEnvelope(input: PublishInput, validator: MessageValidator): EncodedEnvelope {
  const built = buildEnvelope(input);
  let body: string;
  try {
    body = JSON.stringify(built);
  } catch (err) {
    throw new InvalidMessageError(`message ${built.type} is not serialisable: ${describeError(err)}`);
  }
  // Validate what the consumer will parse, not the in-memory object: Dates, undefined and
  // the like change shape in JSON and must be judged in that shape.
  const wire = JSON.parse(body) as Envelope;
  const problem = validator.validateEnvelope(wire);
  if (problem !== null) throw new InvalidMessageError(`message ${built.type} is invalid: ${problem}`);
  return { envelope: wire, body };
}

export type DecodedEnvelope = { ok: true; envelope: Envelope } | { ok: false; reason: string };

/**
 * Parses a delivered body; `validator` null skips the schema check (the body was checked when
 * published). `parsed`: the body already parsed by the in-process publisher, handed over once.
 */
export function decodeEnvelope(body: string, validator: MessageValidator | null, parsed?: unknown): DecodedEnvelope {
  if (parsed === undefined) {
    try {
      parsed = JSON.parse(body);
    } catch {
      return { ok: false, reason: 'schema: body is not JSON' };
    }
  }
  if (!isEnvelopeShaped(parsed)) return { ok: false, reason: 'schema: body is not an envelope' };
  if (validator === null) return { ok: true, envelope: parsed };
  const problem = validator.validateEnvelope(parsed);
  if (problem !== null) return { ok: false, reason: `schema: ${problem}` };
  return { ok: true, envelope: parsed };
}

function isEnvelopeShaped(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.id === 'string' && typeof v.type === 'string';
}

/** Reads a dead-lettered message back; the body is kept raw when it is not an envelope. */
export function decodeDeadLetter(body: string, headers: Record<string, unknown>): DeadLetter {
  let envelope: Envelope | null = null;
  try {
    const parsed: unknown = JSON.parse(body);
    if (isEnvelopeShaped(parsed)) envelope = parsed;
  } catch {
    envelope = null;
  }
  const reason = typeof headers[HEADER.reason] === 'string' ? (headers[HEADER.reason] as string) : fallbackReason(headers);
  const attempts = Number(headers[HEADER.failures] ?? 0);
  const letter: DeadLetter = { envelope, reason, attempts: Number.isFinite(attempts) ? attempts : 0 };
  if (envelope === null) letter.raw = body;
  return letter;
}

// A message the broker dead-lettered by itself (rejected, expired, over length) carries only x-death.
function fallbackReason(headers: Record<string, unknown>): string {
  const first = headers['x-first-death-reason'];
  return typeof first === 'string' ? `broker: ${first}` : 'unknown';
}

export function describeError(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
