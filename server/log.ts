import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Credentials are redacted; file contents are never logged. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'archive-dedup' },
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-csrf-token"]', 'res.headers["set-cookie"]', 'password', 'token', '*.password', '*.token'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
