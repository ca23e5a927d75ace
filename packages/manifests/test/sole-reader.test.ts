// @reelay/manifests is the only place that reads manifests and feeds: the lint rule that holds every
// other package to it is run here on code that breaks it, and no other package may even depend on
// an XML or playlist parser.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { ESLint } from 'eslint';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PARSERS = ['fast-xml-parser', 'fast-xml-builder', 'hls-parser', 'm3u8-parser', 'mpd-parser', 'xml2js', 'sax'];

const offending = `import { XMLParser } from 'fast-xml-parser';
import type { Variant } from 'hls-parser/types.js';
import { Parser } from 'htmlparser2';
export const tree = new XMLParser();
export type V = Variant;
export const feed = new Parser({}, { xmlMode: true });
export const later = () => import('m3u8-parser');
export const page = () => import('htmlparser2');
`;

/** The lines the sole-reader rules report in `code`, as if it were the file at `file`. */
async function flagged(file: string): Promise<number[]> {
  const [result] = await new ESLint({ cwd: REPO }).lintText(offending, { filePath: path.join(REPO, file) });
  return result.messages
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax')
    .map((m) => m.line);
}

describe('no package but @reelay/manifests reads manifests or feeds', () => {
  test('an XML or playlist parser imported, statically or not, or htmlparser2 run in XML mode, fails lint anywhere else', async () => {
    for (const file of ['packages/extractors/src/x.ts', 'apps/worker/src/record/x.ts', 'bench/x.mjs']) {
      expect(await flagged(file)).toEqual([1, 2, 6, 7]);
    }
  }, 60_000);

  test('inside @reelay/manifests the same code passes', async () => {
    expect(await flagged('packages/manifests/src/x.ts')).toEqual([]);
  }, 60_000);

  test('no other package depends on one', () => {
    const manifests = [
      'package.json',
      ...['packages', 'apps'].flatMap((dir) =>
        fs.readdirSync(path.join(REPO, dir)).map((name) => path.join(dir, name, 'package.json')),
      ),
    ].filter(
      (file) => fs.existsSync(path.join(REPO, file)) && file !== path.join('packages', 'manifests', 'package.json'),
    );
    for (const file of manifests) {
      const pkg = JSON.parse(fs.readFileSync(path.join(REPO, file), 'utf8'));
      const deps = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies, ...pkg.optionalDependencies });
      expect({ file, parsers: deps.filter((d) => PARSERS.includes(d)) }).toEqual({ file, parsers: [] });
    }
  });
});
