import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Credentials are redacted; file contents are never logged. Written to
 * standard output synchronously by default: pino's asynchronous writer sends one 16 KiB write per
 * event-loop turn, so a saturated server queued its request log in memory (RSS grew by about
 * 200 MB a minute under the load test); a line is a few microseconds of write.
 */
export function createLogger(
  level: string,
  destination: pino.DestinationStream = pino.destination({ dest: 1, sync: true }),
): Logger {
  return pino(
    {
      level,
      base: { service: 'archive-dedup' },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["x-csrf-token"]',
          'res.headers["set-cookie"]',
          'password',
          'token',
          '*.password',
          '*.token',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
