// Email out: nodemailer over SMTP, one message per recipient, with a Message-ID made from the
// delivery id (a resend after a crash carries the same id, which mail stores use to drop the
// copy). Without an SMTP server configured, messages are kept in the instance's own mailbox table,
// readable with `sightline automations mailbox` (README "Email without SMTP").
import type { SqlStore } from '@sightline/kit';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Message } from '../compose/compose';
import { DeliveryError, errorCode } from './errors';

export interface EmailSender {
  readonly kind: 'smtp' | 'mailbox';
  send(deliveryId: string, to: string, message: Message): Promise<string>;
  close(): void;
}

export function messageIdOf(deliveryId: string): string {
  return `<${deliveryId}@automations.sightline>`;
}

export function createSmtpSender(options: { url: string; from: string; timeoutMs: number }): EmailSender {
  // A small pool: messages to many recipients reuse connections instead of a handshake each.
  const transport: Transporter = nodemailer.createTransport({
    url: options.url,
    pool: true,
    maxConnections: 4,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    kind: 'smtp',
    async send(deliveryId, to, message) {
      try {
        const info = (await transport.sendMail({
          from: options.from,
          to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          messageId: messageIdOf(deliveryId),
          headers: { 'X-Sightline-Delivery': deliveryId, 'Auto-Submitted': 'auto-generated' },
        })) as { messageId?: string; rejected?: unknown[] };
        if (Array.isArray(info.rejected) && info.rejected.length > 0) throw new DeliveryError('SMTP server refused the recipient', false, null, `rejected ${JSON.stringify(info.rejected)}`);
        return info.messageId ?? messageIdOf(deliveryId);
      } catch (error) {
        throw classifySmtpError(error);
      }
    },
    close() {
      transport.close();
    },
  };
}

/**
 * SMTP replies 5xx are permanent; 4xx, timeouts and connection failures are worth retrying. Keys
 * see the reply code only: the server's text (hosts, addresses, the message quoted) is the detail.
 */
export function classifySmtpError(error: unknown): DeliveryError {
  if (error instanceof DeliveryError) return error;
  const e = error as { responseCode?: number; response?: string; code?: string; message?: string };
  const detail = e.response ?? e.message ?? String(error);
  if (typeof e.responseCode === 'number' && Number.isInteger(e.responseCode)) {
    const code = e.responseCode;
    return code < 500
      ? new DeliveryError(`SMTP server deferred the message (${code})`, true, null, detail)
      : new DeliveryError(`SMTP server refused the message (${code})`, false, null, detail);
  }
  if (e.code === 'ETIMEDOUT') return new DeliveryError('SMTP server did not answer in time', true, null, detail);
  const code = errorCode(e.code);
  return new DeliveryError(`SMTP server could not be reached${code ? ` (${code})` : ''}`, true, null, detail);
}

export function createMailboxSender(sql: SqlStore, now: () => Date): EmailSender {
  return {
    kind: 'mailbox',
    async send(deliveryId, to, message) {
      // The delivery id is unique: a repeated attempt keeps the first copy.
      const result = await sql.query<{ id: string }>(
        `INSERT INTO mailbox (delivery_id, recipient, subject, text_body, html_body, created_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (delivery_id) DO UPDATE SET delivery_id = EXCLUDED.delivery_id RETURNING id::text AS id`,
        [deliveryId, to, message.subject, message.text, message.html, now()],
      );
      return `mailbox:${result.rows[0]?.id ?? '?'}`;
    },
    close() {
      // nothing held
    },
  };
}
