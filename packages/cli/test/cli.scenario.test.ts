import { spawn, spawnSync } from 'node:child_process';
// `reelay` end to end: the built CLI as a child process against a real gateway and worker (the run's
// Redis, ffmpeg, the test media on a local origin), through a proxy that records its requests.
import { describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '@reelay/testkit';
import { ROOT, runCli, runInTerminal, startCli, startInTerminal, streamTypes, until, useCliStack } from './helpers.js';

const stack = useCliStack('e2e');

/** A page with one video: progressive (one muxed file) or split (video only + audio only). Each has
 *  its own title, so its jobs are never another test's. */
function page(kind: 'progressive' | 'split', title = `${kind} ${randomBytes(3).toString('hex')}`): string {
  const { origin, media } = stack;
  origin.file('/media/muxed.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/media/video-only.mp4', media.videoOnlyMp4, 'video/mp4');
  origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
  const sources =
    kind === 'progressive'
      ? `<source src="/media/muxed.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"'>`
      : `<source src="/media/video-only.mp4" type='video/mp4; codecs="avc1.64001e"'><source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'>`;
  const at = `/${title.replace(/\s/g, '-')}.html`;
  origin.body(at, `<!doctype html><title>${title}</title><video>${sources}</video>`, 'text/html');
  return origin.url(at);
}

// The test reads the server's answers directly too, to compare with what the CLI printed.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const api = async (path: string, init?: RequestInit): Promise<any> =>
  (await fetch(`${stack.direct}${path}`, init)).json();
const requests = (pattern: RegExp) => stack.proxy.seen.filter((r) => pattern.test(`${r.method} ${r.path}`));
const BAR = /[█░]|\r|\x1b\[/;

describe('reelay get', () => {
  test("saves a progressive file under the server's filename, prints its path on stdout and plain progress on stderr", async () => {
    const cwd = stack.workDir();
    const url = page('progressive', 'Progressive clip');
    const run = await runCli(['get', url], { cwd, server: stack.proxy.base });
    expect(run.stderr).not.toContain('error');
    expect(run.code).toBe(0);
    const saved = path.join(cwd, 'Progressive clip.mp4');
    expect(run.stdout).toBe(`${saved}\n`);
    expect(fs.readFileSync(saved).equals(fs.readFileSync(stack.media.muxedMp4))).toBe(true);
    expect(fs.readdirSync(cwd)).toEqual(['Progressive clip.mp4']); // no part file left
    // Piped, so no bar: plain lines, the last at 100%.
    expect(run.stderr).not.toMatch(BAR);
    const kib = (fs.statSync(saved).size / 1024).toFixed(1);
    expect(run.stderr).toContain(`\nProgressive clip.mp4 100% (${kib} KiB of ${kib} KiB)\n`);
  });

  test("of a video with separate audio merges the best pair, follows the job's events and saves the artifact", async () => {
    const cwd = stack.workDir();
    const before = stack.proxy.seen.length;
    const run = await runCli(['get', page('split', 'Split clip')], { cwd, server: stack.proxy.base });
    expect(run.stderr).not.toContain('error');
    expect(run.code).toBe(0);
    const saved = path.join(cwd, 'Split clip.mp4');
    expect(run.stdout).toBe(`${saved}\n`);
    expect(streamTypes(saved)).toEqual(['video', 'audio']);
    const seen = stack.proxy.seen.slice(before);
    // One step: the server extracts and chooses; the job's view names the pair it chose.
    const download = seen.find((r) => r.path === '/api/v1/download')!;
    expect(JSON.parse(download.body)).toEqual({ page_url: expect.stringContaining('/Split-clip.html') });
    const id = /job (\S{22})/.exec(run.stderr)![1];
    // The job was followed through its event stream, never by polling its status.
    expect(seen.map((r) => r.path)).toEqual([
      '/api/v1/download',
      `/api/v1/jobs/${id}/events`,
      `/api/v1/jobs/${id}/artifact`,
    ]);
    // Said in words: what the server picked, not only its quality label ("original").
    expect(run.stderr).toContain('reelay: the server picked video (mp4) + audio (m4a), merged\n');
    expect((await api(`/api/v1/jobs/${id}`)).data.source).toEqual({
      quality: 'original',
      video_url: `${stack.origin.base}/media/video-only.mp4`,
      audio_url: `${stack.origin.base}/media/audio-only.m4a`,
      description: 'video (mp4) + audio (m4a), merged',
    });
    expect(run.stderr).toMatch(new RegExp(`^job ${id} completed 100%$`, 'm'));
    expect(fs.statSync(saved).size).toBe((await api(`/api/v1/jobs/${id}`)).data.artifact.size);
  });

  test('-f mp3 converts the best audio source to mp3', async () => {
    const cwd = stack.workDir();
    const url = page('split', 'Audio clip');
    const run = await runCli(['get', url, '-f', 'mp3'], { cwd, server: stack.proxy.base });
    expect(run.code).toBe(0);
    expect(JSON.parse(requests(/download$/).at(-1)!.body)).toEqual({ page_url: url, format: 'mp3' });
    expect(run.stdout).toBe(`${path.join(cwd, 'Audio clip.mp3')}\n`);
    expect(streamTypes(path.join(cwd, 'Audio clip.mp3'))).toEqual(['audio']);
  });

  test('-o saves into a folder or as a file; an -o folder that does not exist is an error and nothing is written', async () => {
    const cwd = stack.workDir();
    fs.mkdirSync(path.join(cwd, 'out'));
    const url = page('progressive');
    expect((await runCli(['get', url, '-o', 'out'], { cwd, server: stack.proxy.base })).stdout).toMatch(
      /\/out\/progressive-?.*\.mp4\n$/,
    );
    expect((await runCli(['get', url, '-o', 'mine.mp4'], { cwd, server: stack.proxy.base })).stdout).toBe(
      `${path.join(cwd, 'mine.mp4')}\n`,
    );
    const missing = await runCli(['get', url, '-o', 'nowhere/x.mp4'], { cwd, server: stack.proxy.base });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/the folder .*nowhere does not exist/);
    expect(fs.readdirSync(cwd).sort()).toEqual(['mine.mp4', 'out']);
    // An existing file is never overwritten.
    fs.writeFileSync(path.join(cwd, 'mine.mp4'), 'mine');
    const exists = await runCli(['get', url, '-o', 'mine.mp4'], { cwd, server: stack.proxy.base });
    expect(exists.code).toBe(1);
    expect(exists.stderr).toContain(
      `reelay: error: ${path.join(cwd, 'mine.mp4')} already exists; nothing was overwritten.\nreelay: Remove it, or save under another name with -o.\n`,
    );
    expect(fs.readFileSync(path.join(cwd, 'mine.mp4'), 'utf8')).toBe('mine');
  });
});

describe('reelay get: choices and habits', () => {
  test('-q and -x go to the server as the preset; the stream names what it picked', async () => {
    const cwd = stack.workDir();
    const url = page('progressive', 'Preset clip');
    const run = await runCli(['get', url, '-q', '480'], { cwd, server: stack.proxy.base });
    expect(run.code).toBe(0);
    expect(JSON.parse(requests(/download$/).at(-1)!.body)).toEqual({ page_url: url, quality: '480p' });
    const kib = (fs.statSync(stack.media.muxedMp4).size / 1024).toFixed(1);
    expect(run.stderr).toContain(`reelay: the server picked video with audio (mp4), ${kib} KiB\n`);
    const audio = await runCli(['get', page('split', 'Preset audio'), '-x'], { cwd, server: stack.proxy.base });
    expect(audio.code).toBe(0);
    expect(JSON.parse(requests(/download$/).at(-1)!.body)).toMatchObject({ audio_only: true });
    expect(audio.stdout).toBe(`${path.join(cwd, 'Preset audio.m4a')}\n`);
  });

  test('a file already downloaded is reported and exits 0, for a stream and for a job, and is not fetched again', async () => {
    const cwd = stack.workDir();
    for (const [kind, name] of [
      ['progressive', 'Twice streamed'],
      ['split', 'Twice merged'],
    ] as const) {
      const url = page(kind, name);
      const first = await runCli(['get', url], { cwd, server: stack.proxy.base });
      expect(first.code).toBe(0);
      const saved = first.stdout.trim();
      const bytes = fs.readFileSync(saved);
      const artifactsBefore = requests(/\/artifact$/).length;
      const again = await runCli(['get', url], { cwd, server: stack.proxy.base });
      expect({ kind, code: again.code, stdout: again.stdout }).toEqual({ kind, code: 0, stdout: `${saved}\n` });
      expect(again.stderr).toContain(`reelay: ${saved} has already been downloaded\n`);
      expect(requests(/\/artifact$/).length).toBe(artifactsBefore);
      expect(fs.readFileSync(saved).equals(bytes)).toBe(true);
    }
    expect(fs.readdirSync(cwd).sort()).toEqual(['Twice merged.mp4', 'Twice streamed.mp4']);
  });

  test('--source N downloads that source of the extract table', async () => {
    const cwd = stack.workDir();
    const before = stack.proxy.seen.length;
    const run = await runCli(['get', page('split', 'Second source'), '--source', '2'], {
      cwd,
      server: stack.proxy.base,
    });
    expect(run.code).toBe(0);
    const seen = stack.proxy.seen.slice(before);
    expect(seen.map((r) => r.path)).toEqual(['/api/v1/extract', '/api/v1/download']);
    expect(JSON.parse(seen[1].body)).toEqual({
      url: `${stack.origin.base}/media/audio-only.m4a`,
      extraction_id: expect.any(String),
    });
    expect(run.stderr).toContain('reelay: picked audio (m4a)\n');
    expect(fs.readFileSync(run.stdout.trim()).equals(fs.readFileSync(stack.media.audioOnlyM4a))).toBe(true);
    const none = await runCli(['get', page('split'), '--source', '9'], { cwd, server: stack.proxy.base });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('there is no source 9: this item has 2.');
  });

  test('--items all takes every item of a gallery, each into a file of its own; --items N one of them', async () => {
    const cwd = stack.workDir();
    const { origin, media } = stack;
    origin.file('/media/one.mp4', media.muxedMp4, 'video/mp4');
    origin.file('/media/two.mp4', media.videoOnlyMp4, 'video/mp4');
    origin.body(
      '/gallery.html',
      `<!doctype html><title>Gallery</title><video src="/media/one.mp4"></video><video src="/media/two.mp4"></video>`,
      'text/html',
    );
    const url = origin.url('/gallery.html');
    const result = await api('/api/v1/extract', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    expect(result.data.media).toHaveLength(2);
    const run = await runCli(['get', url, '--items', 'all'], { cwd, server: stack.proxy.base });
    expect(run.code).toBe(0);
    const files = run.stdout.trim().split('\n');
    expect(files).toEqual([path.join(cwd, 'Gallery 1.mp4'), path.join(cwd, 'Gallery 2.mp4')]);
    expect(fs.readFileSync(files[0]).equals(fs.readFileSync(media.muxedMp4))).toBe(true);
    expect(fs.readFileSync(files[1]).equals(fs.readFileSync(media.videoOnlyMp4))).toBe(true);
    expect(run.stderr).toMatch(/^reelay: item 2 \(2 of 2\): picked /m);
    // One item: the one-step route with its index (from 0 on the wire).
    const second = await runCli(['get', url, '--items', '2', '-o', 'second.mp4'], { cwd, server: stack.proxy.base });
    expect(second.code).toBe(0);
    expect(JSON.parse(requests(/download$/).at(-1)!.body)).toEqual({ page_url: url, item: 1 });
    const beyond = await runCli(['get', url, '--items', '3'], { cwd, server: stack.proxy.base });
    expect(beyond.code).toBe(1);
    expect(beyond.stderr).toMatch(/item 2 is out of range: this page has 2 media items/);
  });

  test('--clip START-END,precise asks for the exact cut', async () => {
    const cwd = stack.workDir();
    const run = await runCli(['get', page('progressive', 'Precise clip'), '--clip', '0.5-1.5,precise'], {
      cwd,
      server: stack.proxy.base,
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(requests(/download$/).at(-1)!.body)).toMatchObject({
      clip: { start: 0.5, end: 1.5, mode: 'precise' },
    });
    const seconds = Number(
      spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', run.stdout.trim()], {
        encoding: 'utf8',
      }).stdout,
    );
    expect(Math.abs(seconds - 1)).toBeLessThan(0.1);
  });

  test('`pnpm reelay get` saves into the folder it was run from, not the repository root', async () => {
    const cwd = stack.workDir();
    const url = page('progressive', 'From my folder');
    const child = spawn('pnpm', ['--silent', '-C', ROOT, 'reelay', 'get', url], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, REELAY_SERVER: stack.proxy.base },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect({ code, stderr: stderr.includes('error') ? stderr : '' }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`${path.join(cwd, 'From my folder.mp4')}\n`);
    expect(fs.existsSync(path.join(cwd, 'From my folder.mp4'))).toBe(true);
    expect(fs.existsSync(path.join(ROOT, 'From my folder.mp4'))).toBe(false);
  });
});

describe('broken connections', () => {
  test("a job's event stream cut after its first event is reopened with Last-Event-ID, and the job still completes", async () => {
    const cwd = stack.workDir();
    // Paused: the first event (queued) is sure to come before the job can finish.
    await stack.gateway.queue.pause();
    stack.proxy.interfere({ path: /\/events$/, kind: 'cut', after: 'first-event' });
    // Counted from here: the tests before this one opened event streams of their own.
    const before = requests(/\/events$/).length;
    const cli = startCli(['get', page('split', 'Reopened clip')], { cwd, server: stack.proxy.base });
    try {
      await until(() => requests(/\/events$/).length === before + 2, 15_000, 'the event stream to be reopened');
    } finally {
      // Never leave the queue paused for the tests after this one.
      await stack.gateway.queue.resume();
    }
    const run = await cli.done;
    expect(run.code).toBe(0);
    const [first, second] = requests(/\/events$/).slice(-2);
    expect(first.lastEventId).toBeUndefined();
    expect(second.lastEventId).toMatch(/^\d+$/);
    expect(streamTypes(path.join(cwd, 'Reopened clip.mp4'))).toEqual(['video', 'audio']);
  }, 60_000); // a merge job behind a paused queue and a reopened stream: slow on a loaded 2-core machine

  test("a job's event stream that goes silent (no event, no heartbeat) is given up after REELAY_EVENT_SILENCE_SECONDS and reopened, and the job still completes", async () => {
    const cwd = stack.workDir();
    await stack.gateway.queue.pause();
    // The proxy passes the first event, then holds the connection open and says nothing more: a
    // connection a NAT forgot. Without the silence rule the CLI waited on it for ever.
    stack.proxy.interfere({ path: /\/events$/, kind: 'stall', after: 'first-event' });
    const before = requests(/\/events$/).length;
    const cli = startCli(['get', page('split', 'Silent stream')], {
      cwd,
      server: stack.proxy.base,
      env: { REELAY_EVENT_SILENCE_SECONDS: '1' },
    });
    try {
      await until(() => requests(/\/events$/).length === before + 2, 15_000, 'the silent event stream to be reopened');
    } finally {
      await stack.gateway.queue.resume();
    }
    const run = await cli.done;
    expect(run.stderr).not.toContain('error');
    expect(run.code).toBe(0);
    const [first, second] = requests(/\/events$/).slice(-2);
    expect(first.lastEventId).toBeUndefined();
    expect(second.lastEventId).toMatch(/^\d+$/);
    expect(streamTypes(path.join(cwd, 'Silent stream.mp4'))).toEqual(['video', 'audio']);
  }, 60_000);

  test('a direct stream cut in the middle is an error (exit 1) that leaves no file behind', async () => {
    const cwd = stack.workDir();
    stack.proxy.interfere({ path: /^\/api\/v1\/download$/, kind: 'cut', after: 50_000 });
    const run = await runCli(['get', page('progressive')], { cwd, server: stack.proxy.base });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /\nreelay: error: the transfer from the server broke off \(.+\)\.\nreelay: Run the same command again\.\n$/,
    );
    expect(fs.readdirSync(cwd)).toEqual([]);
  });
});

describe('reelay extract and job', () => {
  test("extract --json prints the server's extract result; without it, a table", async () => {
    const cwd = stack.workDir();
    const url = page('split', 'Listed clip');
    const run = await runCli(['extract', url, '--json'], { cwd, server: stack.proxy.base });
    expect(run.code).toBe(0);
    const direct = await api('/api/v1/extract', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    // Each extract answer names its own extraction; everything else is the same.
    expect(JSON.parse(run.stdout)).toEqual({ ...direct.data, extraction_id: expect.any(String) });
    const table = await runCli(['extract', url], { cwd, server: stack.proxy.base });
    expect(table.stdout.split('\n')[0]).toBe('Listed clip (generic, video)');
    expect(table.stdout).toMatch(/^item 1: video$/m);
    expect(table.stdout).toMatch(/^# {2}QUALITY +TRACKS +PROFILE +EXT +RESOLUTION +BITRATE +CODECS$/m);
    expect(table.stdout).toMatch(/^1 {2}original +video +video_only +mp4 +avc1\.64001e$/m);
    expect(table.stdout).toMatch(/^2 {2}original +audio +audio_only +m4a +mp4a\.40\.2$/m);
  });

  test('job ID shows the job; --json prints it as the server does', async () => {
    const cwd = stack.workDir();
    const got = await runCli(['get', page('split')], { cwd, server: stack.proxy.base });
    const id = /job (\S{22})/.exec(got.stderr)![1];
    const shown = await runCli(['job', id], { cwd, server: stack.proxy.base });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id: +${id}$`, 'm'));
    expect(shown.stdout).toMatch(/^status: +completed$/m);
    expect(shown.stdout).toMatch(/^file: +split \w+\.mp4 \(\d+\.\d KiB, video\/mp4\)$/m);
    const json = await runCli(['job', id, '--json'], { cwd, server: stack.proxy.base });
    expect(JSON.parse(json.stdout)).toEqual((await api(`/api/v1/jobs/${id}`)).data);
  });
});

describe('failures', () => {
  test("a server error exits 1 with the server's own message and code on stderr, nothing on stdout", async () => {
    const cwd = stack.workDir();
    const url = stack.origin.url('/gone.html');
    stack.origin.status('/gone.html', 404);
    const direct = await api('/api/v1/extract', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    for (const args of [
      ['get', url],
      ['extract', url],
    ]) {
      const run = await runCli(args, { cwd, server: stack.proxy.base });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr.split('\n').at(-2)).toBe(
        `reelay: error: ${direct.error.message} (content_not_found, HTTP 404)`,
      );
    }
    const unknown = await runCli(['job', 'AAAAAAAAAAAAAAAAAAAAAA'], { cwd, server: stack.proxy.base });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^reelay: error: .+ \(job_not_found, HTTP 404\)$/m);
    // base64url ids may begin with "-": still the id, not an unknown option (a usage error).
    const dashed = await runCli(['job', '-AAAAAAAAAAAAAAAAAAAAA'], { cwd, server: stack.proxy.base });
    expect(dashed.code).toBe(1);
    expect(requests(/^GET \/api\/v1\/jobs\/-A{21}$/)).toHaveLength(1);
  });

  test("a job that fails exits 1 with the job's own error message and code", async () => {
    const cwd = stack.workDir();
    // Not media at all: the worker's ffmpeg cannot read it, so the merge fails.
    stack.origin.body('/media/broken-video.mp4', Buffer.alloc(4096, 7), 'video/mp4');
    stack.origin.body('/media/broken-audio.m4a', Buffer.alloc(4096, 7), 'audio/mp4');
    stack.origin.body(
      '/broken.html',
      `<!doctype html><title>Broken</title><video><source src="/media/broken-video.mp4" type='video/mp4; codecs="avc1.64001e"'><source src="/media/broken-audio.m4a" type='audio/mp4; codecs="mp4a.40.2"'></video>`,
      'text/html',
    );
    const run = await runCli(['get', stack.origin.url('/broken.html')], { cwd, server: stack.proxy.base });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const id = /job (\S{22})/.exec(run.stderr)![1];
    const job = await api(`/api/v1/jobs/${id}`);
    expect(job.data.status).toBe('failed');
    expect(run.stderr.split('\n').slice(-3, -1)).toEqual([
      `reelay: error: ${job.data.error.message} (${job.data.error.code})`,
      `reelay: See it with \`reelay job ${id}\`.`,
    ]);
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  test('--clip and --subs are sent as the request fields of DESIGN.md; a server without them answers an error, exit 1', async () => {
    const cwd = stack.workDir();
    const run = await runCli(['get', page('progressive'), '--clip', '1-1.5', '--subs', 'en,fr'], {
      cwd,
      server: stack.proxy.base,
    });
    expect(JSON.parse(requests(/download$/).at(-1)!.body)).toMatchObject({
      clip: { start: 1, end: 1.5 },
      subtitles: ['en', 'fr'],
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^reelay: error: .+ \(invalid_request, HTTP 400\)$/m);
  });

  test('--clip makes a job that cuts the media; the saved file is the clip, not the whole', async () => {
    const cwd = stack.workDir();
    const run = await runCli(['get', page('split', 'Clipped clip'), '--clip', '0.5-1.5'], {
      cwd,
      server: stack.proxy.base,
    });
    expect(run.code).toBe(0);
    const saved = run.stdout.trim();
    expect(JSON.parse(requests(/download$/).at(-1)!.body)).toMatchObject({ clip: { start: 0.5, end: 1.5 } });
    const seconds = (file: string) =>
      Number(
        spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], {
          encoding: 'utf8',
        }).stdout,
      );
    // fast mode copies from the keyframe at or before 0.5 s, so the clip lasts 1 s plus at most that lead-in.
    expect(seconds(saved)).toBeGreaterThanOrEqual(0.9);
    expect(seconds(saved)).toBeLessThanOrEqual(1.6);
  });

  test('an unreachable server exits 1 and says how to start or name one', async () => {
    const port = await freePort();
    const run = await runCli(['extract', 'http://127.0.0.1/x'], {
      cwd: stack.workDir(),
      server: `http://127.0.0.1:${port}`,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `reelay: error: cannot reach the reelay server at http://127.0.0.1:${port} (ECONNREFUSED).\n` +
        'reelay: Start one with `pnpm start` in the reelay repository, or point --server / REELAY_SERVER at it.\n',
    );
  });

  test('usage errors exit 2 before any request', async () => {
    const cwd = stack.workDir();
    const before = stack.proxy.seen.length;
    const bad = [
      ['get'],
      ['get', 'http://x', '-q', 'hd'],
      ['get', 'http://x', '-q', '900p'],
      ['get', 'http://x', '-f', 'avi'],
      ['get', 'http://x', '--clip', '2:00-1:00'],
      ['get', 'http://x', '--clip', '1-2,exact'],
      ['get', 'not-a-url'],
      ['get', 'example.com/video'],
      ['get', 'ftp://example.com/x'],
      ['extract', 'javascript:alert(1)'],
      ['extract', 'www.example.com'],
      ['get', 'http://x', '--items', '0'],
      ['get', 'http://x', '--source', '0'],
      ['get', 'http://x', '--items', 'all', '--source', '1'],
      ['get', 'http://x', '-x', '-f', 'mp4'],
      ['frobnicate'],
      [],
      ['--server', 'ftp://127.0.0.1', 'job', 'x'],
    ];
    for (const args of bad) {
      const run = await runCli(args, { cwd, server: stack.proxy.base });
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stdout).toBe('');
    }
    expect(stack.proxy.seen.length).toBe(before);
    const notUrl = await runCli(['get', 'example.com/video'], { cwd, server: stack.proxy.base });
    expect(notUrl.stderr).toContain('"example.com/video" is not a web address: give the page\'s full http(s) URL');
    const help = await runCli(['get', '--help'], { cwd });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Examples:\n {2}reelay get https:\/\/example\.com\/watch\/123 /m);
    expect(help.stdout).toContain('--items all');
    expect((await runCli(['--help'], { cwd })).stdout).toContain('Examples:');
  });
});

describe('resuming an artifact', () => {
  test('a transfer cut in the middle continues with Range and If-Range, and the file is whole', async () => {
    const cwd = stack.workDir();
    stack.proxy.interfere({ path: /\/artifact$/, kind: 'cut', after: 100_000 });
    const run = await runCli(['get', page('split', 'Cut clip')], { cwd, server: stack.proxy.base });
    expect(run.stderr).not.toContain('error');
    expect(run.code).toBe(0);
    const [first, second, ...rest] = requests(/^GET .*\/artifact$/).slice(-2);
    expect(rest).toEqual([]);
    expect(first.range).toBeUndefined();
    // fetch drops what it had buffered but not handed over when the connection fails, so the
    // resume starts where the part file ends: at most the 100000 bytes sent.
    const from = Number(/^bytes=(\d+)-$/.exec(second.range!)![1]);
    expect(from).toBeGreaterThan(0);
    expect(from).toBeLessThanOrEqual(100_000);
    expect(second.ifRange).toEqual(expect.any(String));
    expect([first.status, second.status]).toEqual([200, 206]);
    const id = /job (\S{22})/.exec(run.stderr)![1];
    const whole = Buffer.from(await (await fetch(`${stack.direct}/api/v1/jobs/${id}/artifact`)).arrayBuffer());
    expect(fs.readFileSync(path.join(cwd, 'Cut clip.mp4')).equals(whole)).toBe(true);
  });

  test("Ctrl-C stops at once and keeps the job's part file; the same command again asks only for the rest", async () => {
    const cwd = stack.workDir();
    const url = page('split', 'Stopped clip');
    stack.proxy.interfere({ path: /\/artifact$/, kind: 'stall', after: 120_000 });
    const cli = startCli(['get', url], { cwd, server: stack.proxy.base });
    const part = () => fs.readdirSync(cwd).find((f) => f.endsWith('.part'));
    await until(
      () => part() !== undefined && fs.statSync(path.join(cwd, part()!)).size === 120_000,
      30_000,
      'the part file to hold 120000 bytes',
    );
    cli.child.kill('SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([
      cli.done,
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error('still running 3 s after Ctrl-C')), 3000)),
      ),
    ]);
    clearTimeout(timer);
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toMatch(
      /\nreelay: stopped\.\nreelay: the part file is kept; the same command again downloads only the rest\.\n$/,
    );
    const kept = part()!;
    expect(kept).toMatch(/^Stopped clip\.mp4\.\S{22}\.part$/);

    const again = await runCli(['get', url], { cwd, server: stack.proxy.base });
    expect(again.code).toBe(0);
    expect(requests(/^GET .*\/artifact$/).at(-1)!.range).toBe('bytes=120000-');
    const id = /job (\S{22})/.exec(again.stderr)![1];
    expect(kept).toBe(`Stopped clip.mp4.${id}.part`);
    const whole = Buffer.from(await (await fetch(`${stack.direct}/api/v1/jobs/${id}/artifact`)).arrayBuffer());
    expect(fs.readFileSync(path.join(cwd, 'Stopped clip.mp4')).equals(whole)).toBe(true);
    expect(fs.readdirSync(cwd)).toEqual(['Stopped clip.mp4']);
  });
});

describe('on a terminal', () => {
  test('stderr shows progress bars for the job and the download; stdout still holds only the path', async () => {
    const cwd = stack.workDir();
    const stdoutFile = path.join(cwd, '..', `${path.basename(cwd)}.stdout`);
    const run = await runInTerminal(['get', page('split', 'Terminal clip')], {
      cwd,
      server: stack.proxy.base,
      stdoutFile,
    });
    expect(run.code).toBe(0);
    expect(fs.readFileSync(stdoutFile, 'utf8')).toBe(`${path.join(cwd, 'Terminal clip.mp4')}\n`);
    // cli-progress redraws its line in place (carriage return or cursor codes) with block characters.
    expect(run.terminal).toMatch(/job \S{22} completed █{30} 100%/);
    expect(run.terminal).toMatch(/Terminal clip\.mp4 █{30} 100% \d+\.\d KiB \/ \d+\.\d KiB/);
    expect(run.terminal).toMatch(/\r|\x1b\[/);
    // Every bar that hid the cursor showed it again.
    const count = (code: string) => run.terminal.split(code).length - 1;
    expect(count('\x1b[?25l')).toBeGreaterThan(0);
    expect(count('\x1b[?25h')).toBe(count('\x1b[?25l'));
  });

  test('errors are red on a terminal unless NO_COLOR is set', async () => {
    const cwd = stack.workDir();
    const args = ['job', 'AAAAAAAAAAAAAAAAAAAAAA'];
    const stdoutFile = path.join(cwd, 'stdout');
    const coloured = await runInTerminal(args, { cwd, server: stack.proxy.base, stdoutFile });
    expect(coloured.code).toBe(1);
    expect(coloured.terminal).toContain('reelay: \x1b[31merror\x1b[39m: ');
    const plain = await runInTerminal(args, { cwd, server: stack.proxy.base, stdoutFile, env: { NO_COLOR: '1' } });
    expect(plain.code).toBe(1);
    expect(plain.terminal).toMatch(/^reelay: error: .+ \(job_not_found, HTTP 404\)\r\n/);
    expect(plain.terminal).not.toContain('\x1b[');
  });

  test('Ctrl-C typed while a job waits stops at once, gives the cursor and line wrapping back, and says the job goes on', async () => {
    const cwd = stack.workDir();
    await stack.gateway.queue.pause();
    try {
      const run = startInTerminal(['get', page('split')], {
        cwd,
        server: stack.proxy.base,
        stdoutFile: path.join(cwd, 'stdout'),
      });
      await until(() => / queued /.test(run.terminal()), 15_000, 'the job bar');
      run.type('\x03');
      const { code, terminal } = await run.done;
      expect(code).toBe(130);
      expect(terminal).toMatch(
        /reelay: stopped\.\r\nreelay: job (\S{22}) is still running on the server: the same command picks it up again, `reelay job \1 --cancel` cancels it\.\r\n$/,
      );
      expect(terminal.lastIndexOf('\x1b[?25h')).toBeGreaterThan(terminal.lastIndexOf('\x1b[?25l'));
      expect(terminal.lastIndexOf('\x1b[?7h')).toBeGreaterThan(terminal.lastIndexOf('\x1b[?7l'));
      expect(fs.readFileSync(path.join(cwd, 'stdout'), 'utf8')).toBe('');
    } finally {
      await stack.gateway.queue.resume();
    }
  });
});
