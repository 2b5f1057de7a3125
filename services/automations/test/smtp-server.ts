// A real SMTP server in the test process (smtp-server), recording what it accepted. A message
// counts only once the server has answered 250 to its data, as with any SMTP server: a client that
// disconnects before that answer (killed mid-delivery) leaves nothing behind. Tests can hold the
// answer (to kill a client mid-delivery) or refuse messages with a reply code.
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  headers: Record<string, string>;
}

export interface TestSmtpServer {
  url: string;
  port: number;
  received: ReceivedMail[];
  /** Messages whose data arrived but whose 250 was never sent (the client went away first). */
  dropped: number;
  /** Errors the server reported other than a client resetting its connection (tests expect none). */
  serverErrors: Error[];
  /** Holds the 250 of every message from now on until release() (or the client disconnects). */
  hold(): void;
  release(): void;
  /** Resolves once `n` messages are being held. */
  holding(n: number): Promise<void>;
  /** Answers the next `count` messages with this SMTP reply code (e.g. 451 temporary, 550 permanent), and this text if given. */
  refuseNext(count: number, code: number, text?: string): void;
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  let holdAll = false;
  const held = new Map<string, () => void>();
  const closedSessions = new Set<string>();
  let holdWaiters: { n: number; resolve: () => void }[] = [];
  let refusals: { count: number; code: number; text?: string } | null = null;
  const state = { dropped: 0, serverErrors: [] as Error[] };

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onClose(session: SMTPServerSession) {
      closedSessions.add(session.id);
      held.get(session.id)?.();
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        void (async () => {
          if (refusals && refusals.count > 0) {
            refusals.count -= 1;
            const error = new Error(refusals.text ?? (refusals.code >= 500 ? 'mailbox unavailable' : 'try again later')) as Error & { responseCode: number };
            error.responseCode = refusals.code;
            callback(error);
            return;
          }
          if (holdAll) {
            await new Promise<void>((resolve) => {
              held.set(session.id, resolve);
              for (const w of holdWaiters.filter((x) => held.size >= x.n)) w.resolve();
              holdWaiters = holdWaiters.filter((x) => held.size < x.n);
            });
            held.delete(session.id);
          }
          if (closedSessions.has(session.id)) {
            // The client went away before our answer: the message is not accepted.
            state.dropped += 1;
            return;
          }
          const mail = await simpleParser(Buffer.concat(chunks));
          const headers: Record<string, string> = {};
          for (const [k, v] of mail.headers) headers[k] = typeof v === 'string' ? v : JSON.stringify(v);
          received.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            subject: mail.subject ?? '',
            text: mail.text ?? '',
            html: typeof mail.html === 'string' ? mail.html : '',
            messageId: mail.messageId ?? '',
            headers,
          });
          callback();
        })();
      });
    },
  });
  // A client killed mid-transaction resets its socket (ECONNRESET while a message is under way):
  // smtp-server reports that as an 'error' event on the server, which without a listener would
  // be thrown in the test process. It is what a crash test causes, and onClose has counted it.
  server.on('error', (error: Error & { code?: string }) => {
    if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') state.serverErrors.push(error);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    received,
    get dropped() {
      return state.dropped;
    },
    get serverErrors() {
      return state.serverErrors;
    },
    hold() {
      holdAll = true;
    },
    release() {
      holdAll = false;
      // A client killed just before may not have been noticed yet: give the close a moment to
      // arrive, so a message whose client is gone is never accepted.
      setTimeout(() => {
        for (const resolve of held.values()) resolve();
      }, 200);
    },
    holding(n) {
      if (held.size >= n) return Promise.resolve();
      return new Promise((resolve) => holdWaiters.push({ n, resolve }));
    },
    refuseNext(count, code, text) {
      refusals = { count, code, ...(text !== undefined ? { text } : {}) };
    },
    async waitFor(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`SMTP server: ${received.length} of ${n} messages arrived`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
