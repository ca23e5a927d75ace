// Hostile manifests served to a job (the origin may have served a benign one at extract time): a
// playlist naming itself, two masters naming each other, a master where a segment was expected, a
// master reached again through a redirect, a playlist of a million segments. Each fails fast as
// upstream_error saying why, and ffmpeg stays small while it does.
import { describe, expect, test } from '@jest/globals';
import type { JobInput } from '@reelay/contracts';
import { payload, useWorkerStack } from '../helpers.js';
import { runHostile } from './run-hostile.js';

// Short enough that a job the checks missed fails the "ends within" bounds below, long enough for the
// old code's figures (it ran until this limit).
const stack = useWorkerStack('hostile-manifests', { serveMedia: false, env: { JOB_TIMEOUT_SECONDS: '30' } });

const hls = (path: string): JobInput => ({ url: stack.origin.url(path), stream_profile: 'hls' });
const M3U8 = 'application/vnd.apple.mpegurl';
const master = (...variants: string[]) =>
  ['#EXTM3U', ...variants.flatMap((v) => ['#EXT-X-STREAM-INF:BANDWIDTH=100000', v])].join('\n') + '\n';

// Bounds: a refused manifest ends the job within ENDS_WITHIN_S; its processes stay under CHILD_MB
// (ffmpeg and ffprobe together; an HLS remux of a small file takes ~60 MB, the loop took 2.8 GB).
const ENDS_WITHIN_S = 15;
const CHILD_MB = 300;

describe('a hostile HLS playlist in a job', () => {
  test('a master that names itself fails the job as upstream_error: the playlist names itself', async () => {
    stack.origin.body('/self.m3u8', master('self.m3u8'), M3U8);
    const out = await runHostile(
      'self-referencing master',
      stack.queue,
      payload([hls('/self.m3u8')], { operation: 'remux' }),
      stack.origin.base,
    );
    expect(out.code).toBe('upstream_error');
    expect(out.message).toMatch(/names itself/);
    expect(out.seconds).toBeLessThan(ENDS_WITHIN_S);
    expect(out.peaks.childrenMb).toBeLessThan(CHILD_MB);
  });

  test('two masters that name each other fail the job: only one level of nesting', async () => {
    stack.origin.body('/ping.m3u8', master('pong.m3u8'), M3U8);
    stack.origin.body('/pong.m3u8', master('ping.m3u8'), M3U8);
    const out = await runHostile(
      'mutually recursive masters',
      stack.queue,
      payload([hls('/ping.m3u8')], { operation: 'remux' }),
      stack.origin.base,
    );
    expect(out.code).toBe('upstream_error');
    expect(out.message).toMatch(/master playlist names another master/);
    expect(out.seconds).toBeLessThan(ENDS_WITHIN_S);
    expect(out.peaks.childrenMb).toBeLessThan(CHILD_MB);
  });

  test('a media playlist whose segment is a master fails the job: a playlist where a segment was expected', async () => {
    stack.origin.body(
      '/media.m3u8',
      '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nnested.m3u8\n#EXT-X-ENDLIST\n',
      M3U8,
    );
    stack.origin.body('/nested.m3u8', master('media.m3u8'), M3U8);
    const out = await runHostile(
      'master in media playlist',
      stack.queue,
      payload([hls('/media.m3u8')], { operation: 'remux' }),
      stack.origin.base,
    );
    expect(out.code).toBe('upstream_error');
    expect(out.message).toMatch(/where a media segment was expected/);
    expect(out.seconds).toBeLessThan(ENDS_WITHIN_S);
    expect(out.peaks.childrenMb).toBeLessThan(CHILD_MB);
  });

  test('a master that reaches itself again through a redirect runs out of requests: upstream_error', async () => {
    // Each round is a new fetch of the same master under no new name, so only the request budget sees it.
    stack.origin.body('/loop.m3u8', master('hop'), M3U8);
    stack.origin.redirect('/hop', stack.origin.url('/loop.m3u8'), 302);
    const out = await runHostile(
      'master looping through a redirect',
      stack.queue,
      payload([hls('/loop.m3u8')], { operation: 'remux' }),
      stack.origin.base,
    );
    expect(out.code).toBe('upstream_error');
    expect(out.message).toMatch(/made more than \d+ requests/);
    expect(out.seconds).toBeLessThan(ENDS_WITHIN_S);
    expect(out.peaks.childrenMb).toBeLessThan(CHILD_MB);
    expect(stack.origin.hits.get('/loop.m3u8')).toBeLessThan(200);
  });

  test('a playlist of a million segments fails the job before ffmpeg reads one: more than MAX_SEGMENTS', async () => {
    const lines = ['#EXTM3U', '#EXT-X-TARGETDURATION:1', '#EXTINF:1,\ns\n'.repeat(1_000_000) + '#EXT-X-ENDLIST'];
    stack.origin.body('/million.m3u8', lines.join('\n'), M3U8);
    const out = await runHostile(
      '10^6-segment playlist',
      stack.queue,
      payload([hls('/million.m3u8')], { operation: 'remux' }),
      stack.origin.base,
    );
    expect(out.code).toBe('upstream_error');
    expect(out.message).toMatch(/names 1000000 segments, more than the limit of 20000/);
    expect(out.seconds).toBeLessThan(ENDS_WITHIN_S);
    expect(out.peaks.childrenMb).toBeLessThan(CHILD_MB);
    expect(stack.origin.hits.get('/s') ?? 0).toBe(0);
  });
});
