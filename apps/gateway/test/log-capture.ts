// A pino logger at trace level whose lines the test can read: for checking that no secret is logged.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@reelay/observability';

export function captureLogs(): { logger: Logger; text: () => string } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString('utf8'));
      callback();
    },
  });
  return { logger: createLogger({ name: 'gateway-test', level: 'trace', destination }), text: () => lines.join('') };
}
