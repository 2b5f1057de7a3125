import pino, { type Logger } from 'pino';

/** Structured JSON logs. Credentials never reach a log line. */
export function createLogger(options: { level: string; name?: string }): Logger {
  return pino({
    level: options.level,
    ...(options.name ? { name: options.name } : {}),
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'token', 'password'],
      censor: '[redacted]',
    },
  });
}

export type { Logger };
