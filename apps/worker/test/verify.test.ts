// Jobs are judged by their result, not by every request ffmpeg made: segmented sources that ask for
// one segment past the end still complete, and a file that lacks a track or half its media (an
// origin that ignores Range, a body cut short) never counts as completed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { FsArtifactStore } from '@reelay/artifacts';
import { decodeJobError, type JobInput } from '@reelay/contracts';
import { probe } from '@reelay/media';
import { payload, useWorkerStack } from './helpers.js';

const stack = useWorkerStack('verify', { serveMedia: false });
let store: FsArtifactStore;
let files: string;

beforeAll(() => {
  files = fs.mkdtempSync(path.join(stack.dataDir, 'origin-'));
  store = new FsArtifactStore(stack.dataDir);
});

const input = (route: string, profile: JobInput['stream_profile'], extra: Partial<JobInput> = {}): JobInput => ({
  url: stack.origin.url(route),
  stream_profile: profile,
  ...extra,
});

async function run(job: ReturnType<typeof payload>, attempts = 1) {
  await stack.queue.add(job, { attempts, backoff: { type: 'fixed', delay: 100 } });
  const done = await stack.queue.finished(job.id, 30_000);
  return {
    state: await done.getState(),
    error: done.failedReason ? decodeJobError(done.failedReason) : undefined,
    attemptsMade: done.attemptsMade,
    stored: await store.get(job.id),
  };
}

/** Test media made at test time (nothing large is committed). */
const ffmpeg = (args: string[]) =>
  execFileSync(process.env.FFMPEG_PATH || 'ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args]);

const kinds = async (file: string) => (await probe(file)).streams.map((s) => s.type);

describe('segmented sources that declare one segment more than exists', () => {
  test('a DASH SegmentTemplate ($Number$) whose duration implies a third segment completes with both tracks', async () => {
    // Two 1 s segments per representation, a numbered template without a timeline, and 2.5 s
    // declared: ffmpeg asks for segment 3, which the origin does not have.
    const mpd = fs
      .readFileSync(path.join(stack.media.dashDir, 'manifest.mpd'), 'utf8')
      .replace(/mediaPresentationDuration="[^"]*"/, 'mediaPresentationDuration="PT2.5S"')
      .replace(
        /<SegmentTemplate timescale="(\d+)"([^>]*)>\s*<SegmentTimeline>[\s\S]*?<\/SegmentTimeline>\s*<\/SegmentTemplate>/g,
        '<SegmentTemplate timescale="$1" duration="$1"$2 />',
      );
    expect(mpd).not.toContain('SegmentTimeline');
    fs.writeFileSync(path.join(files, 'long.mpd'), mpd);
    stack.origin.file('/dash-long/long.mpd', path.join(files, 'long.mpd'), 'application/dash+xml');
    for (const name of fs.readdirSync(stack.media.dashDir))
      if (name.endsWith('.m4s'))
        stack.origin.file(`/dash-long/${name}`, path.join(stack.media.dashDir, name), 'video/iso.segment');

    const video = input('/dash-long/long.mpd#representation=0', 'dash', { representation: '0', codecs: 'avc1.42c00d' });
    const audio = input('/dash-long/long.mpd#representation=1', 'dash', { representation: '1', codecs: 'mp4a.40.2' });
    const { state, error, stored } = await run(payload([video, audio], { operation: 'remux', duration: 2.5 }));
    expect({ state, error }).toEqual({ state: 'completed', error: undefined });
    expect(stack.origin.hits.get('/dash-long/chunk-0-00003.m4s')).toBeGreaterThanOrEqual(1); // the 404 happened
    expect(await kinds(stored!.path)).toEqual(['video', 'audio']);
  });

  test('an HLS playlist whose last listed segment is missing completes with what exists', async () => {
    const playlist = fs
      .readFileSync(path.join(stack.media.hlsDir, 'index.m3u8'), 'utf8')
      .replace('#EXT-X-ENDLIST', '#EXTINF:1.000000,\nseg002.ts\n#EXT-X-ENDLIST');
    fs.writeFileSync(path.join(files, 'long.m3u8'), playlist);
    stack.origin.file('/hls-long/long.m3u8', path.join(files, 'long.m3u8'), 'application/vnd.apple.mpegurl');
    for (const name of fs.readdirSync(stack.media.hlsDir))
      if (name.endsWith('.ts'))
        stack.origin.file(`/hls-long/${name}`, path.join(stack.media.hlsDir, name), 'video/mp2t');

    const { state, error, stored } = await run(
      payload([input('/hls-long/long.m3u8', 'hls', { codecs: 'avc1.42c00d,mp4a.40.2' })], {
        operation: 'remux',
        duration: 3,
      }),
    );
    expect({ state, error }).toEqual({ state: 'completed', error: undefined });
    expect(stack.origin.hits.get('/hls-long/seg002.ts')).toBeGreaterThanOrEqual(1);
    expect(await kinds(stored!.path)).toEqual(['video', 'audio']);
    expect((await probe(stored!.path)).durationSeconds).toBeGreaterThan(1.8);
  });

  test('when the segments that exist are far too few, the job fails as content_not_found and says what is missing', async () => {
    // The same playlist declaring 8 s of which 2 exist: the 404s now explain a short file.
    const lines = [
      '#EXTM3U',
      '#EXT-X-VERSION:3',
      '#EXT-X-TARGETDURATION:1',
      '#EXT-X-MEDIA-SEQUENCE:0',
      '#EXT-X-PLAYLIST-TYPE:VOD',
    ];
    for (let i = 0; i < 8; i++) lines.push('#EXTINF:1.000000,', `seg${String(i).padStart(3, '0')}.ts`);
    fs.writeFileSync(path.join(files, 'gaps.m3u8'), [...lines, '#EXT-X-ENDLIST', ''].join('\n'));
    stack.origin.file('/hls-long/gaps.m3u8', path.join(files, 'gaps.m3u8'), 'application/vnd.apple.mpegurl');

    const { state, error, stored } = await run(
      payload([input('/hls-long/gaps.m3u8', 'hls', { codecs: 'avc1.42c00d,mp4a.40.2' })], {
        operation: 'remux',
        duration: 8,
      }),
    );
    expect(state).toBe('failed');
    expect(error?.code).toBe('content_not_found');
    expect(error?.message).toMatch(
      /^The origin answered 404 for part of the media\. The finished file is incomplete: it lasts 2\.\d s of the expected 8\.0 s\.$/,
    );
    expect(stored).toBeUndefined();
  });
});

describe('files that ffmpeg finishes without all of their media', () => {
  test('a merge from an origin that ignores Range fails as incomplete instead of completing without its audio', async () => {
    // Like Python's http.server: every answer is the whole file with 200, whatever Range says. The
    // audio's index (moov) is at its end, so ffmpeg must seek there; the seek fails, ffmpeg prints
    // an I/O error and still exits 0 with the video alone (ffmpeg 5.1 does this on its own too).
    const video = path.join(files, 'plain-video.mp4');
    const audio = path.join(files, 'plain-audio.m4a');
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=160x120:rate=25:duration=6',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-g',
      '25',
      '-an',
      '-movflags',
      '+faststart',
      video,
    ]);
    ffmpeg(['-f', 'lavfi', '-i', 'sine=duration=6', '-c:a', 'aac', '-b:a', '128k', audio]);
    for (const [route, file, type] of [
      ['/plain/video.mp4', video, 'video/mp4'],
      ['/plain/audio.m4a', audio, 'audio/mp4'],
    ] as const) {
      stack.origin.route(route, (_req, res) => {
        const data = fs.readFileSync(file);
        res.writeHead(200, { 'content-type': type, 'content-length': data.length }).end(data);
      });
    }
    const { state, error, stored } = await run(
      payload(
        [
          input('/plain/video.mp4', 'video_only', { codecs: 'avc1.64001e' }),
          input('/plain/audio.m4a', 'audio_only', { codecs: 'mp4a.40.2' }),
        ],
        { operation: 'merge', duration: 6 },
      ),
    );
    expect(state).toBe('failed');
    expect(error).toEqual({
      code: 'upstream_error',
      message: 'The finished file is incomplete: the audio track is missing.',
    });
    expect(stored).toBeUndefined();
  });

  test('a body that ends early without an error fails the job as incomplete, with no artifact', async () => {
    // 8 s of video whose answer stops at a third, as a chunked body that ends cleanly: only the
    // check of the finished file can tell.
    const long = path.join(files, 'long.mp4');
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=160x120:rate=25:duration=8',
      '-f',
      'lavfi',
      '-i',
      'sine=duration=8',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-g',
      '25',
      '-c:a',
      'aac',
      '-shortest',
      '-movflags',
      '+faststart',
      long,
    ]);
    const data = fs.readFileSync(long);
    stack.origin.route('/cut/long.mp4', (_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.end(data.subarray(0, Math.floor(data.length / 3)));
    });
    const { state, error, attemptsMade, stored } = await run(
      payload([input('/cut/long.mp4', 'muxed_progressive', { codecs: 'avc1.42c00d,mp4a.40.2' })], {
        operation: 'convert',
        format: 'mkv',
        duration: 8,
      }),
      2,
    );
    expect(state).toBe('failed');
    expect(error).toEqual({
      code: 'upstream_error',
      message: expect.stringMatching(/^The finished file is incomplete: it lasts \d\.\d s of the expected 8\.0 s\.$/),
    });
    expect(attemptsMade).toBe(1); // the same origin would cut it again
    expect(stored).toBeUndefined();
  });
});

test('a file said to carry sound that arrives without it fails as incomplete instead of completing silent', async () => {
  stack.origin.file('/mute/video.mp4', stack.media.videoOnlyMp4, 'video/mp4');
  const { state, error } = await run(
    payload([input('/mute/video.mp4', 'muxed_progressive', { codecs: 'avc1.64001e,mp4a.40.2' })], {
      operation: 'convert',
      format: 'mkv',
      duration: 2,
    }),
  );
  expect(state).toBe('failed');
  expect(error).toEqual({
    code: 'upstream_error',
    message: 'The finished file is incomplete: the audio track is missing.',
  });
});

test('failed checks leave no temporary folders behind', () => {
  expect(fs.readdirSync(path.join(stack.dataDir, 'tmp'))).toEqual([]);
});
