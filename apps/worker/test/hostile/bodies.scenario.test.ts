// Hostile bodies served to a job: a small gzip that inflates to 1 GiB, sent with Content-Encoding
// gzip though the proxy asked for identity, and a body that never ends. Both are cut at the media
// size limit counted in decoded bytes, so ffmpeg never sees more than that.
import { beforeAll, describe, expect, test } from '@jest/globals';
import type { JobInput } from '@reelay/contracts';
import { gzipBomb } from '@reelay/testkit';
import { payload, useWorkerStack } from '../helpers.js';
import { runHostile } from './run-hostile.js';

const LIMIT_MB = 64;
const stack = useWorkerStack('hostile-bodies', {
  serveMedia: false,
  env: { JOB_TIMEOUT_SECONDS: '30', MAX_MEDIA_BYTES: String(LIMIT_MB * 1024 * 1024) },
});

const GiB = 1024 ** 3;
/** A WAV header for `bytes` of 48 kHz stereo 16-bit silence: valid media that compresses to nothing. */
function wavHeader(bytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(Math.min(bytes + 36, 0xffffffff), 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(2, 22);
  h.writeUInt32LE(48_000, 24);
  h.writeUInt32LE(48_000 * 4, 28);
  h.writeUInt16LE(4, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(Math.min(bytes, 0xffffffff), 40);
  return h;
}

const audio = (path: string): JobInput => ({ url: stack.origin.url(path), stream_profile: 'audio_only' });
// Bounds: cut at the limit within ENDS_WITHIN_S; ffmpeg and ffprobe under CHILD_MB together; this
// process (the worker and its proxy, which now inflates the body itself) grows by less than SELF_MB.
const ENDS_WITHIN_S = 20;
const CHILD_MB = 300;
const SELF_MB = 256;

describe('a hostile body in a job', () => {
  let bomb: Buffer;
  beforeAll(async () => {
    bomb = await gzipBomb(wavHeader(GiB), GiB);
  });

  test('a gzip bomb sent with Content-Encoding: gzip is refused as larger than the limit, counted decoded', async () => {
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    stack.origin.body('/bomb.wav', bomb, 'audio/wav', { 'content-encoding': 'gzip' });
    const out = await runHostile(
      'gzip bomb (ffmpeg)',
      stack.queue,
      payload([audio('/bomb.wav')], { operation: 'convert', format: 'mp3' }),
      stack.origin.base,
    );
    expect(out.code).toBe('upstream_error');
    expect(out.message).toMatch(`larger than the limit of ${LIMIT_MB} MiB`);
    expect(out.seconds).toBeLessThan(ENDS_WITHIN_S);
    expect(out.peaks.childrenMb).toBeLessThan(CHILD_MB);
    expect(out.peaks.selfGrowthMb).toBeLessThan(SELF_MB);
  });

  test('a body in an encoding the proxy cannot read is refused, not passed on', async () => {
    stack.origin.body('/odd.wav', Buffer.concat([wavHeader(1024 * 1024), Buffer.alloc(1024 * 1024)]), 'audio/wav', {
      'content-encoding': 'x-unknown',
    });
    const out = await runHostile(
      'unknown encoding',
      stack.queue,
      payload([audio('/odd.wav')], { operation: 'convert', format: 'mp3' }),
      stack.origin.base,
    );
    expect(out.code).toBe('upstream_error');
    expect(out.message).toMatch(/encoding that cannot be checked \(x-unknown\)/);
    expect(out.seconds).toBeLessThan(ENDS_WITHIN_S);
  });

  test('an endless chunked body is cut at the media size limit: upstream_error, larger than the limit', async () => {
    const chunk = Buffer.alloc(256 * 1024);
    stack.origin.route('/endless.wav', (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/wav' }); // no length: chunked, for ever
      res.write(wavHeader(GiB));
      const more = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', more);
      };
      more();
    });
    const out = await runHostile(
      'endless chunked body',
      stack.queue,
      payload([audio('/endless.wav')], { operation: 'convert', format: 'mp3' }),
      stack.origin.base,
    );
    expect(out.code).toBe('upstream_error');
    expect(out.message).toMatch(`larger than the limit of ${LIMIT_MB} MiB`);
    expect(out.seconds).toBeLessThan(ENDS_WITHIN_S);
    expect(out.peaks.childrenMb).toBeLessThan(CHILD_MB);
    expect(out.peaks.selfGrowthMb).toBeLessThan(SELF_MB);
  });
});
