// `reelay get` of a podcast feed: every entry (or --items) saved into a folder named after the
// collection, a line per entry change and a total, against a real gateway, worker and local feed.
import { describe, expect, test } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { runCli, useCliStack } from './helpers.js';

const stack = useCliStack('coll');

function feed(at: string, title: string, n: number, name = (i: number) => `Episode ${i}`): string {
  const { origin, media } = stack;
  const items: string[] = [];
  for (let i = 1; i <= n; i++) {
    origin.file(`/ep/${i}.m4a`, media.audioOnlyM4a, 'audio/mp4');
    items.push(
      `<item><title>${name(i)}</title><guid isPermaLink="false">${title}-${i}</guid><enclosure url="${origin.url(`/ep/${i}.m4a`)}" length="1000" type="audio/mp4"/></item>`,
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

describe('reelay extract of a playlist or feed', () => {
  test('lists the entries numbered as --items takes them, and says how to download some', async () => {
    const url = feed('/list.xml', 'Tones Weekly', 3);
    const run = await runCli(['extract', url], { cwd: stack.workDir(), server: stack.direct });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        'Tones Weekly (generic, feed: 3 entries)',
        '',
        '#  TITLE',
        '1  Episode 1',
        '2  Episode 2',
        '3  Episode 3',
        '',
      ].join('\n'),
    );
    expect(run.stderr).toBe(
      `reelay: download every entry with \`reelay get ${url}\`, or some by number: \`reelay get ${url} --items 1-3\`\n`,
    );
  });

  test('a long listing is paged like the API: --page 2 goes on numbering, and the first page says how to get there', async () => {
    const url = feed('/long.xml', 'Long', 150);
    const cwd = stack.workDir();
    const first = await runCli(['extract', url], { cwd, server: stack.direct });
    expect(first.code).toBe(0);
    const rows = first.stdout.split('\n').filter((line) => /^\d+ /.test(line));
    expect(rows).toHaveLength(100);
    expect(first.stderr).toContain(
      `reelay: this is page 1 (entries 1-100 of 150); the next page: \`reelay extract ${url} --page 2\``,
    );
    const second = await runCli(['extract', url, '--page', '2'], { cwd, server: stack.direct });
    expect(second.code).toBe(0);
    const more = second.stdout.split('\n').filter((line) => /^\d+ /.test(line));
    expect(more).toHaveLength(50);
    expect(more[0]).toMatch(/^101 +Episode 101$/);
    expect(second.stderr).not.toContain('--page 3');
    const third = await runCli(['extract', url, '--page', '3'], { cwd, server: stack.direct });
    expect(third.code).toBe(1);
    expect(third.stderr).toContain('reelay: error: there is no page 3: this feed has 2 pages.');
    const bad = await runCli(['extract', url, '--page', '0'], { cwd, server: stack.direct });
    expect(bad.code).toBe(2);
  });

  test("a title's control characters never reach the terminal", async () => {
    const url = feed('/hostile.xml', 'Hostile', 1, () => 'Evil&#x1b;]0;owned&#x07; title&#x1b;[2J');
    const run = await runCli(['extract', url], { cwd: stack.workDir(), server: stack.direct });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(run.stdout).toContain('Evil');
  });
});
