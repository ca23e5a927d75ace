// The log formats: JSON lines by default (for machines), pino-pretty lines with LOG_FORMAT=pretty
// (for people), both with secrets redacted.
import { PassThrough } from 'node:stream';
import { expect, test } from '@jest/globals';
import { createLogger } from '../src/index.js';

function capture(format?: 'json' | 'pretty'): { logger: ReturnType<typeof createLogger>; text: () => string } {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  return { logger: createLogger({ name: 'gateway', format, destination: out }), text: () => text };
}

test('JSON lines are the default, one object per line, with the password redacted', () => {
  const { logger, text } = capture();
  logger.info({ password: 'hunter2' }, 'gateway listening');
  const line = JSON.parse(text().trim()) as Record<string, unknown>;
  expect(line).toMatchObject({ level: 30, app: 'gateway', msg: 'gateway listening', password: '[redacted]' });
});

test('LOG_FORMAT=pretty writes a line a person reads: time, level, app and message, no JSON, still redacted', () => {
  const { logger, text } = capture('pretty');
  logger.info({ password: 'hunter2' }, 'gateway listening');
  // Colours only on a terminal; the test reads the text either way.
  const out = text().replace(/\x1b\[[0-9;]*m/g, '');
  expect(out.split('\n')[0]).toMatch(
    /^\[\d\d:\d\d:\d\d\] INFO: gateway: gateway listening {"password":"\[redacted\]"}$/,
  );
  expect(out).toContain('[redacted]');
  expect(out).not.toContain('hunter2');
  expect(() => JSON.parse(out)).toThrow();
});
