// `reelay get` of a podcast feed: every entry (or --items) saved into a folder named after the
// collection, a line per entry change and a total, against a real gateway, worker and local feed.
import { describe, expect, test } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { runCli, useCliStack } from './helpers.js';

const stack = useCliStack('coll');

function feed(at: string, title: string, n: number): string {
  const { origin, media } = stack;
  const items: string[] = [];
  for (let i = 1; i <= n; i++) {
    origin.file(`/ep/${i}.m4a`, media.audioOnlyM4a, 'audio/mp4');
    items.push(
      `<item><title>Episode ${i}</title><guid isPermaLink="false">${title}-${i}</guid><enclosure url="${origin.url(`/ep/${i}.m4a`)}" length="1000" type="audio/mp4"/></item>`,
    );
  }
  origin.body(
    at,
    `<?xml version="1.0"?><rss version="2.0"><channel><title>${title}</title>${items.join('')}</channel></rss>`,
    'application/rss+xml',
  );
  return origin.url(at);
}

describe('reelay get of a playlist or feed', () => {
  test('downloads every entry into a folder named after the collection, with a line per entry and a total', async () => {
    const cwd = stack.workDir();
    const url = feed('/tones.xml', 'Tones: Weekly', 3);
    const run = await runCli(['get', url], { cwd, server: stack.direct });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const folder = path.join(cwd, 'Tones Weekly');
    expect(fs.readdirSync(folder).sort()).toEqual(['Episode 1.m4a', 'Episode 2.m4a', 'Episode 3.m4a']);
    expect(run.stdout.trim().split('\n').sort()).toEqual(
      ['Episode 1.m4a', 'Episode 2.m4a', 'Episode 3.m4a'].map((f) => path.join(folder, f)),
    );
    expect(run.stderr).toMatch(/collection "Tones: Weekly" \(job [A-Za-z0-9_-]{22}\): 3 entries into/);
    expect(run.stderr).toMatch(/ {2}1 Episode 1: completed/);
    expect(run.stderr).toMatch(/total: 3 of 3 done, 0 running, 0 waiting, 0 failed, 0 skipped/);
  });

  test('--items 2-3 and --items 1 take those entries only', async () => {
    const cwd = stack.workDir();
    const url = feed('/pick.xml', 'Picked', 3);
    const run = await runCli(['get', url, '--items', '2-3'], { cwd, server: stack.direct });
    expect(run.code).toBe(0);
    expect(fs.readdirSync(path.join(cwd, 'Picked')).sort()).toEqual(['Episode 2.m4a', 'Episode 3.m4a']);
    const cwd2 = stack.workDir();
    const one = await runCli(['get', url, '--items', '1'], { cwd: cwd2, server: stack.direct });
    expect(one.code).toBe(0);
    expect(fs.readdirSync(path.join(cwd2, 'Picked'))).toEqual(['Episode 1.m4a']);
  });
});
