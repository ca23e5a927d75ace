import { describe, expect, test } from '@jest/globals';
import type { JobInput, JobPayload } from '@reelay/contracts';
import { keptIntervals } from '../src/kept.js';
import { planJob } from '../src/plan.js';

const ID = 'AAAAAAAAAAAAAAAAAAAAAA';
const V: JobInput = { url: 'https://cdn.example.com/v.mp4', stream_profile: 'video_only', codecs: 'avc1.64001f' };
const A: JobInput = { url: 'https://cdn.example.com/a.m4a', stream_profile: 'audio_only', codecs: 'mp4a.40.2' };
const HLS: JobInput = {
  url: 'http://127.0.0.1:9/hls/index.m3u8',
  stream_profile: 'hls',
  codecs: 'avc1.42c00d,mp4a.40.2',
};
const DASH_V: JobInput = {
  url: 'http://127.0.0.1:9/dash/manifest.mpd#representation=0',
  stream_profile: 'dash',
  representation: '0',
  codecs: 'avc1.42c00d',
};
const DASH_A: JobInput = {
  url: 'http://127.0.0.1:9/dash/manifest.mpd#representation=1',
  stream_profile: 'dash',
  representation: '1',
  codecs: 'mp4a.40.2',
};

function payload(inputs: JobInput[], extra: Partial<JobPayload> = {}): JobPayload {
  return { id: ID, operation: 'merge', inputs, basename: 'clip', request_key: 'k', created_at: 0, ...extra };
}

describe('a merge pair', () => {
  test('goes into the container its codecs call for, through the stand-in names', () => {
    const plan = planJob(payload([V, A]));
    expect(plan.operation).toEqual({
      type: 'merge',
      videoInput: { url: 'http://cdn.example.com.443.reelay-https.invalid/v.mp4' },
      audioInput: { url: 'http://cdn.example.com.443.reelay-https.invalid/a.m4a' },
      container: 'mp4',
      videoCodec: 'h264',
      audioCodec: 'aac',
    });
    expect([plan.filename, plan.contentType]).toEqual(['clip.mp4', 'video/mp4']);
  });

  test('goes into a requested container, and vp9 with opus into webm by default', () => {
    expect(planJob(payload([V, A], { format: 'mkv' })).operation).toMatchObject({ type: 'merge', container: 'mkv' });
    const vp9 = { ...V, codecs: 'vp09.00.10.08' };
    const opus = { ...A, codecs: 'opus' };
    expect(planJob(payload([vp9, opus])).operation).toMatchObject({ type: 'merge', container: 'webm' });
  });

  test('asked for an audio format converts the audio member alone', () => {
    const plan = planJob(payload([V, A], { format: 'mp3' }));
    expect(plan.operation).toMatchObject({
      type: 'convert',
      format: 'mp3',
      audioCodec: 'aac',
      input: { url: 'http://cdn.example.com.443.reelay-https.invalid/a.m4a' },
    });
    expect(plan.probe.input.url).toContain('/a.m4a');
  });

  test('carries the recorded headers ffmpeg may send, and drops the ones it manages itself', () => {
    const headers = { Referer: 'https://site.example/', 'User-Agent': 'UA', Range: 'bytes=0-', Host: 'x' };
    const plan = planJob(payload([{ ...V, headers }, A]));
    expect(plan.operation).toMatchObject({
      videoInput: { headers: { Referer: 'https://site.example/', 'User-Agent': 'UA' } },
    });
  });
});

describe('one progressive file', () => {
  test('is converted to the requested format', () => {
    const muxed: JobInput = {
      url: 'http://127.0.0.1:9/m.mp4',
      stream_profile: 'muxed_progressive',
      codecs: 'avc1.42c00d,mp4a.40.2',
    };
    expect(planJob(payload([muxed], { operation: 'convert', format: 'mp3' })).operation).toEqual({
      type: 'convert',
      input: { url: 'http://127.0.0.1:9/m.mp4' },
      format: 'mp3',
      videoCodec: 'h264',
      audioCodec: 'aac',
    });
  });

  test('without a format is an invalid request', () => {
    expect(() => planJob(payload([V], { operation: 'convert' }))).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
  });
});

describe('HLS and DASH', () => {
  test('an HLS playlist is remuxed into mp4 with the crypto protocol allowed', () => {
    expect(planJob(payload([HLS], { operation: 'remux' })).operation).toEqual({
      type: 'remux',
      manifest: 'hls',
      input: { url: HLS.url },
      representation: undefined,
      container: 'mp4',
      audioCodec: 'aac',
      aes128: true,
    });
  });

  test('an HLS playlist with unknown codecs goes into mp4; into webm it is converted', () => {
    const bare = { ...HLS, codecs: undefined };
    expect(planJob(payload([bare], { operation: 'remux' })).operation).toMatchObject({
      type: 'remux',
      container: 'mp4',
    });
    expect(planJob(payload([HLS], { operation: 'remux', format: 'webm' })).operation).toMatchObject({
      type: 'convert',
      manifest: 'hls',
      format: 'webm',
    });
  });

  test('a DASH representation is remuxed by its id, without the fragment in the URL', () => {
    const plan = planJob(payload([DASH_A], { operation: 'remux' }));
    expect(plan.operation).toMatchObject({
      type: 'remux',
      manifest: 'dash',
      input: { url: 'http://127.0.0.1:9/dash/manifest.mpd' },
      representation: '1',
      container: 'mp4',
    });
    expect(plan.probe).toMatchObject({ kind: 'dash', aes128: false });
  });

  test('a DASH representation asked for as mp3 is converted from that representation', () => {
    expect(planJob(payload([DASH_A], { operation: 'convert', format: 'mp3' })).operation).toMatchObject({
      type: 'convert',
      manifest: 'dash',
      representation: '1',
      format: 'mp3',
    });
  });

  test('a DASH video and audio pair is remuxed with both representations', () => {
    expect(planJob(payload([DASH_V, DASH_A], { operation: 'remux' })).operation).toMatchObject({
      type: 'remux',
      manifest: 'dash',
      videoRepresentation: '0',
      audioRepresentation: '1',
      container: 'mp4',
    });
  });

  test('a mixed pair, or a pair that would need re-encoding, is an invalid request', () => {
    expect(() => planJob(payload([HLS, A]))).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => planJob(payload([DASH_V, DASH_A], { format: 'webm' }))).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
  });
});

test('an image is not a job', () => {
  expect(() => planJob(payload([{ url: 'http://x/i.png', stream_profile: 'image' }], { format: 'mp4' }))).toThrow(
    expect.objectContaining({ code: 'invalid_request' }),
  );
});

test('an input that is not http or https is url_blocked', () => {
  expect(() => planJob(payload([{ ...V, url: 'file:///etc/passwd' }, A]))).toThrow(
    expect.objectContaining({ code: 'url_blocked' }),
  );
});

describe('what the smart cut keeps', () => {
  const MUXED: JobInput = {
    url: 'https://cdn.example.com/m.mp4',
    stream_profile: 'muxed_progressive',
    codecs: 'avc1.64001f,mp4a.40.2',
  };
  const op = planJob(payload([MUXED], { operation: 'convert', format: 'mp4' })).operation;

  test('a precise clip keeps one interval; no clip or a fast one leaves the file to the ffmpeg command', () => {
    expect(keptIntervals({ clip: { start: 1.5, end: 6.5, mode: 'precise' } }, op)).toEqual([{ start: 1.5, end: 6.5 }]);
    expect(keptIntervals({ clip: { start: 1.5, end: 6.5, mode: 'fast' } }, op)).toBeUndefined();
    expect(keptIntervals({}, op)).toBeUndefined();
  });

  test('the plan carries them for mp4 and mkv only: other formats re-encode the clip in their command', () => {
    const clip = { start: 2, end: 5, mode: 'precise' as const };
    for (const format of ['mp4', 'mkv'] as const)
      expect(planJob(payload([MUXED], { operation: 'convert', format, clip })).kept).toEqual([{ start: 2, end: 5 }]);
    for (const format of ['webm', 'mp3', 'm4a'] as const)
      expect(planJob(payload([MUXED], { operation: 'convert', format, clip })).kept).toBeUndefined();
    expect(planJob(payload([V, A], { clip })).kept).toEqual([{ start: 2, end: 5 }]);
  });
});
