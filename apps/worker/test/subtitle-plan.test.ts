import { describe, expect, test } from '@jest/globals';
import type { JobInput, JobPayload, SubtitleInput } from '@reelay/contracts';
import { planJob } from '../src/plan.js';

const ID = 'AAAAAAAAAAAAAAAAAAAAAA';
const V: JobInput = {
  url: 'https://cdn.example.com/v.mp4',
  stream_profile: 'muxed_progressive',
  codecs: 'avc1.64001f,mp4a.40.2',
};
const EN: SubtitleInput = {
  url: 'https://cdn.example.com/en.vtt',
  format: 'vtt',
  language: 'en',
  label: 'English',
  headers: { Referer: 'https://example.com/' },
};
const DE: SubtitleInput = { url: 'http://127.0.0.1:9/subs/de.m3u8', format: 'hls', language: 'de' };

function payload(inputs: JobInput[], extra: Partial<JobPayload> = {}): JobPayload {
  return { id: ID, operation: 'convert', inputs, basename: 'clip', request_key: 'k', created_at: 0, ...extra };
}

describe('a subtitle download', () => {
  test('one track with no media input is written alone, through the stand-in names and with its headers', () => {
    const plan = planJob(payload([], { subtitles: [EN], format: 'srt' }));
    expect(plan.operation).toEqual({
      type: 'subtitle',
      format: 'srt',
      track: {
        input: {
          url: 'http://cdn.example.com.443.reelay-https.invalid/en.vtt',
          headers: { Referer: 'https://example.com/' },
        },
        source: 'file',
        language: 'en',
        title: 'English',
      },
    });
    expect([plan.filename, plan.contentType, plan.probe.kind]).toEqual([
      'clip.srt',
      'application/x-subrip',
      'subtitles',
    ]);
  });

  test('an HLS track is read as an HLS subtitle playlist', () => {
    const plan = planJob(payload([], { subtitles: [DE], format: 'vtt', operation: 'remux' }));
    expect(plan.operation).toMatchObject({
      type: 'subtitle',
      format: 'vtt',
      track: { source: 'hls', input: { url: 'http://127.0.0.1:9/subs/de.m3u8' } },
    });
    expect(plan.probe.kind).toBe('hls_subtitles');
  });

  test('two tracks, or no format, is not a subtitle download', () => {
    expect(() => planJob(payload([], { subtitles: [EN, DE], format: 'vtt' }))).toThrow(/one subtitle track/);
    expect(() => planJob(payload([], { subtitles: [EN] }))).toThrow(/one subtitle track/);
  });
});

describe('embedded tracks', () => {
  test('join the media operation in order', () => {
    const plan = planJob(payload([V], { format: 'mkv', subtitles: [EN, DE] }));
    expect(plan.operation).toMatchObject({
      type: 'convert',
      format: 'mkv',
      subtitles: [
        { source: 'file', language: 'en' },
        { source: 'hls', language: 'de' },
      ],
    });
  });

  test('an audio format cannot carry them, and media is never written as vtt or srt', () => {
    expect(() => planJob(payload([V], { format: 'mp3', subtitles: [EN] }))).toThrow(/mp4, webm or mkv/);
    expect(() => planJob(payload([V], { format: 'vtt' }))).toThrow(/subtitle track/);
  });
});
