// pino JSON logs. Secrets never reach a line: the redact list covers every header and field that
// may carry a key, cookie or password, whatever the caller logs.
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
  'password',
  '*.password',
  'secret',
  '*.secret',
  'apiKey',
  '*.apiKey',
];

export function createLogger(options: { name: string; level?: string; destination?: NodeJS.WritableStream }): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { app: options.name, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? process.stdout,
  );
}
