// A whole file kept in its own format (payload.whole_file: a collection's or subscription's entry):
// a real worker fetches it first, through its egress proxy, in parallel Range parts on an origin
// that is slow per connection, then copies its streams with ffmpeg from the local file, even when
// the payload names no codecs (and converts them when they do not fit after all). Correctness only;
// the speed is bench/collection.mjs's.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { FsArtifactStore } from '@reelay/artifacts';
import { decodeJobError, type JobInput, type JobPayload } from '@reelay/contracts';
import { probe } from '@reelay/media';
import { ffmpegBinary, serveFile } from '@reelay/testkit';
import { payload, useWorkerStack } from './helpers.js';

const stack = useWorkerStack('whole-file');
/** A podcast CDN's pace per connection: the ~2.9 MB episode takes 1.4 s over one. */
const RATE = 2 * 1024 * 1024;
let dir: string;
let episode: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-whole-'));
  episode = path.join(dir, 'episode.m4a');
  // AAC at 128 kb/s (a re-encode would write 192) in MP4 with its index at the end, as ffmpeg writes it by default.
  execFileSync(ffmpegBinary(), [
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    'anoisesrc=d=180:c=pink:r=44100',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-f',
    'mp4',
    episode,
  ]);
}, 60_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Serves the episode at `route`, throttled per connection, counting requests, Range parts and the most at once. */
function serveEpisode(route: string) {
  const seen = { requests: 0, ranges: 0, now: 0, max: 0 };
  stack.origin.route(route, (req, res) => {
    seen.requests += 1;
    seen.now += 1;
    seen.max = Math.max(seen.max, seen.now);
    if (req.headers.range && /^bytes=\d+-\d+$/.test(req.headers.range)) seen.ranges += 1;
    res.once('close', () => (seen.now -= 1));
    serveFile(req, res, episode, 'audio/mp4', {}, RATE);
  });
  return seen;
}

// As the gateway plans an entry's file that needs no conversion: its own format, no codecs known.
const wholeFile = (url: string, extra: Partial<JobPayload> = {}) =>
  payload([{ url, stream_profile: 'audio_only' } satisfies JobInput], {
    format: 'm4a',
    whole_file: true,
    duration: undefined,
    ...extra,
  });

async function run(job: JobPayload) {
  await stack.queue.add(job);
  const done = await stack.queue.finished(job.id, 60_000);
  const state = await done.getState();
  const stored = state === 'completed' ? await new FsArtifactStore(stack.dataDir).get(job.id) : undefined;
  return {
    state,
    error: state === 'failed' ? decodeJobError(done.failedReason) : undefined,
    file: stored?.path,
    meta: stored?.meta,
  };
}

const titleOf = (file: string) =>
  execFileSync(
    process.env.FFPROBE_PATH || 'ffprobe',
    ['-v', 'error', '-show_entries', 'format_tags=title', '-of', 'default=nw=1:nk=1', file],
    { encoding: 'utf8' },
  ).trim();

describe('a whole file kept in its own format', () => {
  test('is fetched in parallel parts, its AAC copied (not re-encoded) with the tags written', async () => {
    const seen = serveEpisode('/whole/episode.m4a');
    const done = await run(wholeFile(stack.origin.url('/whole/episode.m4a'), { tags: { title: 'Episode one' } }));
    expect(done.error).toBeUndefined();
    expect(seen.ranges).toBeGreaterThan(0);
    expect(seen.max).toBeGreaterThan(1);
    const [source, made] = await Promise.all([probe(episode), probe(done.file!)]);
    expect(made.streams.map((s) => [s.type, s.codec])).toEqual([['audio', 'aac']]);
    expect(Math.abs(made.durationSeconds! - source.durationSeconds!)).toBeLessThan(0.1);
    // A re-encode (at 192 kb/s) would be half as large again; a copy differs by the container's bytes.
    expect(Math.abs(fs.statSync(done.file!).size - fs.statSync(episode).size)).toBeLessThan(64 * 1024);
    expect(titleOf(done.file!)).toBe('Episode one');
    expect(done.meta).toMatchObject({ filename: 'clip.m4a', content_type: 'audio/mp4' });
  }, 60_000);

  test('a file whose streams do not fit its own format after all (AAC named .mp3) is probed and converted', async () => {
    stack.origin.route('/named.mp3', (req, res) => serveFile(req, res, stack.media.audioOnlyM4a, 'audio/mpeg'));
    const done = await run(wholeFile(stack.origin.url('/named.mp3'), { format: 'mp3' }));
    expect(done.error).toBeUndefined();
    expect((await probe(done.file!)).streams.map((s) => [s.type, s.codec])).toEqual([['audio', 'mp3']]);
  }, 60_000);

  test('a redirect is followed through the proxy', async () => {
    serveEpisode('/moved/there.m4a');
    stack.origin.route('/moved/here.m4a', (_req, res) => res.writeHead(302, { location: '/moved/there.m4a' }).end());
    const done = await run(wholeFile(stack.origin.url('/moved/here.m4a')));
    expect(done.error).toBeUndefined();
    expect(done.state).toBe('completed');
  }, 60_000);

  test('a missing file fails the job with content_not_found', async () => {
    stack.origin.route('/gone.m4a', (_req, res) => res.writeHead(404).end());
    const done = await run(wholeFile(stack.origin.url('/gone.m4a')));
    expect(done.state).toBe('failed');
    expect(done.error?.code).toBe('content_not_found');
  }, 60_000);

  test('a body cut short fails the job (upstream_error), never a truncated artifact', async () => {
    const size = fs.statSync(episode).size;
    stack.origin.route('/short.m4a', (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mp4', 'content-length': size });
      res.end(fs.readFileSync(episode).subarray(0, 100_000), () => res.destroy());
    });
    const job = wholeFile(stack.origin.url('/short.m4a'));
    const done = await run(job);
    expect(done.state).toBe('failed');
    expect(done.error?.code).toBe('upstream_error');
    expect(await new FsArtifactStore(stack.dataDir).get(job.id)).toBeUndefined();
  }, 60_000);

  test('a file that is not media fails with upstream_error', async () => {
    stack.origin.route('/page.m4a', (_req, res) =>
      res.writeHead(200, { 'content-type': 'audio/mp4' }).end('<html>not an episode</html>'),
    );
    const done = await run(wholeFile(stack.origin.url('/page.m4a')));
    expect(done.state).toBe('failed');
    expect(done.error?.code).toBe('upstream_error');
  }, 60_000);
});
