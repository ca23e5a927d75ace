// pino JSON logs (LOG_FORMAT=pretty: pino-pretty's lines, for a person at a terminal). Secrets never
// reach a line: the redact list covers every header and field that may carry a key, cookie or
// password, whatever the caller logs.
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

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

export function createLogger(options: {
  name: string;
  level?: string;
  format?: 'json' | 'pretty';
  destination?: NodeJS.WritableStream;
}): Logger {
  const destination = options.destination ?? process.stdout;
  return pino(
    {
      level: options.level ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { app: options.name, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    // Synchronous, like the JSON path, so the last lines before an exit are not lost. Colours follow
    // the terminal (FORCE_COLOR / NO_COLOR); `pnpm start` passes its own terminal's answer on.
    options.format === 'pretty'
      ? pretty({
          destination,
          sync: true,
          singleLine: true,
          ignore: 'pid,hostname,app',
          messageFormat: '{app}: {msg}',
          translateTime: 'SYS:HH:MM:ss',
        })
      : destination,
  );
}
