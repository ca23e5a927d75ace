// The platform API fixtures (hand-written answers in each platform's shape, kept beside the extractor
// tests in packages/extractors/test/fixtures), with their placeholders filled for a local origin, so
// extractor and gateway tests read them by one name instead of by relative paths into another package.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Origin } from './origin.js';

const FIXTURES = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'extractors',
  'test',
  'fixtures',
);

/**
 * A fixture file with its placeholders filled: {{origin}} is http://127.0.0.1:PORT, {{host}} is
 * 127.0.0.1:PORT (protocol-relative URLs), {{tenor}} the stand-in for media.tenor.com.
 */
export function fixture(origin: Origin, name: string): string {
  const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8');
  return text
    .replaceAll('{{origin}}', origin.base)
    .replaceAll('{{host}}', new URL(origin.base).host)
    .replaceAll('{{tenor}}', `${origin.base}/tenor`);
}
