// docs/cli.md's sample sessions are real output, and stay so: every ```console block of the page is
// run, command by command, in a terminal (a pty, as a person types it) against a real gateway and
// worker and a local origin serving the pages the samples name, and what the terminal shows must be
// the sample's lines. Only what differs from run to run is set aside: job ids (matched up, so a later
// command can name an earlier job), times, byte sizes, a bar's fill and ETA, the origin's port and the
// folder. A `^C` in a sample is typed once the line before it shows; a line `…` skips any lines.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@jest/globals';
import { runInPty, screenLines } from '@reelay/testkit';
import { ENTRY, ROOT, useCliStack } from './helpers.js';

const stack = useCliStack('docs');
const DOC = path.join(ROOT, 'docs/cli.md');
/** What the samples call the origin and the folder they run in. */
const DOC_ORIGIN = 'http://127.0.0.1:8000';
const DOC_DIR = '/home/ada/Videos';

interface Step {
  command: string;
  expected: string[];
}

/** The commands of every ```console block, each with the lines it printed. */
function samples(markdown: string): Step[] {
  const steps: Step[] = [];
  for (const block of markdown.matchAll(/^```console\n([\s\S]*?)^```$/gm))
    for (const line of block[1].split('\n').slice(0, -1)) {
      if (line.startsWith('$ ')) steps.push({ command: line.slice(2), expected: [] });
      else steps.at(-1)?.expected.push(line);
    }
  return steps;
}

const ID = /(?<=job |jobs\/|id: +)[A-Za-z0-9_-]{22}(?![A-Za-z0-9_-])/g;

/** Job ids in the order they first appear, as <id1>, <id2>… (the doc's and the run's matched by order). */
class Ids {
  private readonly names = new Map<string, string>();
  name(text: string): string {
    return text.replace(ID, (id) => {
      if (!this.names.has(id)) this.names.set(id, `<id${this.names.size + 1}>`);
      return this.names.get(id)!;
    });
  }
  idOf(name: string): string | undefined {
    return [...this.names].find(([, n]) => n === name)?.[0];
  }
}

/** What may differ between the doc and a run, set aside on both sides. */
function normal(line: string, ids: Ids): string {
  return ids
    .name(line)
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/\d+(\.\d+)? (B|KiB|MiB|GiB)\b/g, '<size>')
    .replace(/[█░]+ \d+%( ETA \S+)?/g, '<bar>');
}

/** A normalised line as a pattern for the raw terminal output, each set-aside part matching any value. */
function pattern(normalised: string): RegExp {
  const parts: Record<string, string> = {
    id: '[A-Za-z0-9_-]{22}',
    time: '\\S+',
    size: '[\\d.]+ \\w+',
    bar: '[█░]+ \\d+%(?: ETA \\S+)?',
  };
  const escaped = normalised.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(escaped.replace(/<(id|time|size|bar)\d*>/g, (_, kind: string) => parts[kind]));
}

/** Lines alike once normalised; `…` in the doc stands for any lines. */
function alike(doc: string[], run: string[]): boolean {
  const [first, ...rest] = doc;
  if (first === undefined) return run.length === 0;
  if (first === '…') return run.some((_, i) => alike(rest, run.slice(i))) || alike(rest, []);
  return run[0] === first && alike(rest, run.slice(1));
}

test("docs/cli.md's sample sessions are what the CLI prints", async () => {
  const { origin, media } = stack;
  // The pages the samples name.
  origin.file('/media/talk-video.mp4', media.videoOnlyMp4, 'video/mp4');
  origin.file('/media/talk-audio.m4a', media.audioOnlyM4a, 'audio/mp4');
  origin.body(
    '/talk.html',
    `<!doctype html><title>Conference talk</title><video><source src="/media/talk-video.mp4" type='video/mp4; codecs="avc1.64001e"'><source src="/media/talk-audio.m4a" type='audio/mp4; codecs="mp4a.40.2"'></video>`,
    'text/html',
  );
  // The keynote's file comes a third at a time and then not at all: its job is still running at ^C.
  const keynote = fs.readFileSync(media.muxedMp4);
  origin.route('/media/keynote.mp4', (_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': keynote.length });
    res.write(keynote.subarray(0, Math.floor(keynote.length / 3)));
  });
  origin.body(
    '/keynote.html',
    `<!doctype html><title>Keynote</title><video src="/media/keynote.mp4"></video>`,
    'text/html',
  );
  const episodes = [
    [3, 'A fifth up'],
    [2, 'Concert A'],
    [1, 'Low hum'],
  ] as const;
  for (const [n] of episodes) origin.file(`/media/ep${n}.m4a`, media.audioOnlyM4a, 'audio/mp4');
  origin.body(
    '/feed.xml',
    `<?xml version="1.0"?><rss version="2.0"><channel><title>Tones Weekly</title>${episodes
      .map(
        ([n, title]) =>
          `<item><title>Episode ${n}: ${title}</title><guid isPermaLink="false">tones-${n}</guid><pubDate>Mon, 0${n} Mar 2026 08:00:00 GMT</pubDate><enclosure url="${origin.url(`/media/ep${n}.m4a`)}" length="1000" type="audio/mp4"/></item>`,
      )
      .join('')}</channel></rss>`,
    'application/rss+xml',
  );

  // `reelay` on PATH, as installed; the samples run in one folder, one command after another.
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-docs-bin-'));
  fs.writeFileSync(path.join(bin, 'reelay'), `#!/bin/sh\nexec '${process.execPath}' '${ENTRY}' "$@"\n`, {
    mode: 0o755,
  });
  const cwd = stack.workDir();
  const docIds = new Ids();
  const runIds = new Ids();
  const steps = samples(fs.readFileSync(DOC, 'utf8'));
  expect(steps.length).toBeGreaterThan(5);
  const session: string[] = [];
  let mismatch: string | undefined;
  try {
    for (const step of steps) {
      // The doc's job ids become the run's: `reelay job <the id printed above>`.
      const command = docIds
        .name(step.command)
        .replace(/<id\d+>/g, (name) => runIds.idOf(name) ?? name)
        .replaceAll(DOC_ORIGIN, origin.base);
      const run = runInPty('bash', ['-c', command], {
        cwd,
        env: {
          PATH: `${bin}:${process.env.PATH}`,
          HOME: os.homedir(),
          REELAY_SERVER: stack.direct,
          COLUMNS: '120',
        },
      });
      const interrupt = step.expected.findIndex((line) => line.includes('^C'));
      if (interrupt >= 0) {
        // Typed once the run shows what the sample's line shows before its ^C.
        await run.waitFor(pattern(normal(step.expected[interrupt].split('^C')[0], new Ids())));
        run.type('\x03');
      }
      const { output } = await run.done;
      const shown = screenLines(output).map((line) =>
        line.replaceAll(origin.base, DOC_ORIGIN).replaceAll(cwd, DOC_DIR),
      );
      session.push(`$ ${step.command}`, ...shown.map((line) => runIds.name(line)));
      const want = step.expected.map((line) => normal(line, docIds));
      const got = shown.map((line) => normal(line, runIds));
      if (!mismatch && !alike(want, got))
        mismatch = `$ ${step.command}\n--- docs/cli.md\n${want.join('\n')}\n--- the CLI printed\n${got.join('\n')}`;
    }
  } finally {
    fs.rmSync(bin, { recursive: true, force: true });
  }
  // On a difference: the first command that differs, and the whole session as it ran (to paste).
  expect(mismatch === undefined ? 'alike' : `${mismatch}\n\n--- the session as it ran\n${session.join('\n')}`).toBe(
    'alike',
  );
}, 180_000);

test('the sample reader finds commands, their lines, and skips', () => {
  const md = '```console\n$ reelay a\none\n…\n$ reelay b\n```\n\n```sh\n$ not this\n```\n';
  expect(samples(md)).toEqual([
    { command: 'reelay a', expected: ['one', '…'] },
    { command: 'reelay b', expected: [] },
  ]);
  expect(alike(['a', '…', 'd'], ['a', 'b', 'c', 'd'])).toBe(true);
  expect(alike(['a', 'd'], ['a', 'b', 'd'])).toBe(false);
  expect(normal(`job ${randomBytes(16).toString('base64url')} completed ███░ 75% ETA 3s`, new Ids())).toBe(
    'job <id1> completed <bar>',
  );
});
