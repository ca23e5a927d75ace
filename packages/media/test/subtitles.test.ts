import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { ffmpegBinary, testMedia } from '@reelay/testkit';
import { DEMUXERS, type InputKind } from '../src/inputs.js';
import { buildArgs, outputFormat, type MediaOperation } from '../src/operations.js';
import { probe } from '../src/probe.js';
import { iso639, subtitleCodec, type SubtitleTrack } from '../src/subtitles.js';
import { judgeOutput } from '../src/verify.js';

const GLOBAL = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-progress', 'pipe:1', '-nostats'];
const OUT = '/data/tmp/job.part';
const V = 'http://127.0.0.1:4100/relay/v';
const A = 'http://127.0.0.1:4100/relay/a';
const EN = 'http://127.0.0.1:4100/relay/en.vtt';
const DE = 'http://127.0.0.1:4100/relay/de.m3u8';
const NET = (url: string, kind: InputKind = 'progressive') => [
  '-protocol_whitelist',
  'http,tcp',
  '-format_whitelist',
  DEMUXERS[kind],
  '-i',
  url,
];
const argv = (op: MediaOperation) => buildArgs(op, { output: OUT }).args;

const en: SubtitleTrack = { input: EN, source: 'file', language: 'en', title: 'English' };
const de: SubtitleTrack = { input: DE, source: 'hls', language: 'de-AT' };

describe('a subtitle track alone', () => {
  test('a sidecar file becomes SRT with only the WebVTT and SRT demuxers allowed', () => {
    const op: MediaOperation = { type: 'subtitle', track: en, format: 'srt' };
    expect(outputFormat(op)).toBe('srt');
    expect(argv(op)).toEqual([
      ...GLOBAL,
      ...NET(EN, 'subtitles'),
      '-map',
      '0:s:0',
      '-c:s',
      'srt',
      '-metadata:s:s:0',
      'language=eng',
      '-metadata:s:s:0',
      'title=English',
      '-f',
      'srt',
      `file:${OUT}`,
    ]);
    expect(DEMUXERS.subtitles).toBe('webvtt,srt');
  });

  test('an HLS track is read by the hls demuxer with WebVTT segments, a DASH track by its representation', () => {
    expect(argv({ type: 'subtitle', track: de, format: 'vtt' })).toEqual([
      ...GLOBAL,
      ...NET(DE, 'hls_subtitles'),
      '-map',
      '0:s:0',
      '-c:s',
      'webvtt',
      '-metadata:s:s:0',
      'language=ger',
      '-f',
      'webvtt',
      `file:${OUT}`,
    ]);
    const dash: SubtitleTrack = {
      input: 'http://127.0.0.1:4100/relay/m.mpd',
      source: 'dash',
      representation: 'sub-es',
      language: 'es',
    };
    expect(argv({ type: 'subtitle', track: dash, format: 'vtt' })).toEqual([
      ...GLOBAL,
      ...NET('http://127.0.0.1:4100/relay/m.mpd', 'dash_subtitles'),
      '-map',
      '0:s:m:id:sub-es',
      '-c:s',
      'webvtt',
      '-metadata:s:s:0',
      'language=spa',
      '-f',
      'webvtt',
      `file:${OUT}`,
    ]);
    expect(() => argv({ type: 'subtitle', track: { ...dash, representation: 'a:b' }, format: 'vtt' })).toThrow(
      /representation id/,
    );
  });
});

describe('subtitle tracks embedded', () => {
  test('a merge into mp4 maps each track after the two media inputs as mov_text, before the muxer', () => {
    expect(argv({ type: 'merge', videoInput: V, audioInput: A, container: 'mp4', subtitles: [en, de] })).toEqual([
      ...GLOBAL,
      ...NET(V),
      ...NET(A),
      ...NET(EN, 'subtitles'),
      ...NET(DE, 'hls_subtitles'),
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c',
      'copy',
      '-map',
      '2:s:0',
      '-map',
      '3:s:0',
      '-c:s',
      'mov_text',
      '-metadata:s:s:0',
      'language=eng',
      '-metadata:s:s:0',
      'title=English',
      '-metadata:s:s:1',
      'language=ger',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('a remux of one HLS stream into mkv writes WebVTT after its one input', () => {
    expect(argv({ type: 'remux', manifest: 'hls', input: V, container: 'mkv', subtitles: [en] })).toEqual([
      ...GLOBAL,
      ...NET(V, 'hls'),
      ...NET(EN, 'subtitles'),
      '-map',
      '0:v:0?',
      '-map',
      '0:a:0?',
      '-c',
      'copy',
      '-map',
      '1:s:0',
      '-c:s',
      'webvtt',
      '-metadata:s:s:0',
      'language=eng',
      '-metadata:s:s:0',
      'title=English',
      '-f',
      'matroska',
      `file:${OUT}`,
    ]);
  });

  test('an audio format cannot carry subtitles', () => {
    expect(() => argv({ type: 'convert', input: V, format: 'mp3', subtitles: [en] })).toThrow(
      /cannot be embedded in mp3/,
    );
    expect(() => argv({ type: 'convert', input: V, format: 'vtt' })).toThrow(/subtitle operation/);
  });

  test('MP4 stores text as mov_text, Matroska and WebM as WebVTT', () => {
    expect([subtitleCodec('mp4'), subtitleCodec('mkv'), subtitleCodec('webm')]).toEqual([
      'mov_text',
      'webvtt',
      'webvtt',
    ]);
  });
});

describe('languages as containers tag them', () => {
  test.each([
    ['en', 'eng'],
    ['en-US', 'eng'],
    ['fr', 'fre'],
    ['pt_BR', 'por'],
    ['zh-Hans', 'chi'],
    ['deu', 'ger'],
    ['ger', 'ger'],
    ['und', 'und'],
    ['xx', 'und'],
    ['live', 'und'],
  ])('%s is tagged %s', (language, tag) => {
    expect(iso639(language)).toBe(tag);
  });
});

describe('judging a subtitle file', () => {
  test('a text-only file passes when it holds the track and fails without it', () => {
    const expected = { video: false, audio: false, subtitles: 1, faststart: false };
    expect(
      judgeOutput(
        { durationSeconds: 2, streams: [{ index: 0, type: 'subtitle', codec: 'webvtt' }] },
        expected,
        undefined,
      ),
    ).toEqual([]);
    expect(judgeOutput({ durationSeconds: 2, streams: [] }, expected, undefined)).toEqual([
      'it holds 0 of the 1 subtitle tracks',
    ]);
  });

  test('a video missing an embedded track is reported', () => {
    const streams = [
      { index: 0, type: 'video' as const, codec: 'h264' },
      { index: 1, type: 'audio' as const, codec: 'aac' },
      { index: 2, type: 'subtitle' as const, codec: 'mov_text' },
    ];
    expect(
      judgeOutput(
        { durationSeconds: 2, streams },
        { video: true, audio: true, subtitles: 2, faststart: false },
        undefined,
      ),
    ).toEqual(['it holds 1 of the 2 subtitle tracks']);
  });
});

describe('the built command run by ffmpeg', () => {
  test('a local mp4 and a local WebVTT file make an mkv whose subtitle stream ffprobe reads as WebVTT', async () => {
    const media = await testMedia();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-subs-'));
    try {
      const vtt = path.join(dir, 'en.vtt');
      fs.writeFileSync(vtt, 'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nHello\n');
      const out = path.join(dir, 'out.mkv');
      const { args } = buildArgs(
        {
          type: 'convert',
          input: media.muxedMp4,
          format: 'mkv',
          subtitles: [{ input: vtt, source: 'file', language: 'en' }],
        },
        { output: out },
      );
      execFileSync(ffmpegBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
      const info = await probe(out);
      expect(info.streams.map((s) => [s.type, s.codec])).toEqual([
        ['video', 'h264'],
        ['audio', 'aac'],
        ['subtitle', 'webvtt'],
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
