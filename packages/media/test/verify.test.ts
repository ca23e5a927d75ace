import { describe, expect, test } from '@jest/globals';
import { durationTolerance, judgeOutput, type OutputExpectation } from '../src/verify.js';

const av = [
  { index: 0, type: 'video' as const, codec: 'h264' },
  { index: 1, type: 'audio' as const, codec: 'aac' },
];
const want = (extra: Partial<OutputExpectation> = {}): OutputExpectation => ({
  video: true,
  audio: true,
  faststart: true,
  ...extra,
});

describe('judging a finished file', () => {
  test('a file with the asked tracks, the right length and its index first passes', () => {
    expect(judgeOutput({ streams: av, durationSeconds: 60 }, want({ durationSeconds: 60 }), true)).toEqual([]);
  });

  test('a missing track is named', () => {
    expect(judgeOutput({ streams: [av[0]], durationSeconds: 2 }, want(), true)).toEqual(['the audio track is missing']);
    expect(judgeOutput({ streams: [av[1]], durationSeconds: 2 }, want(), true)).toEqual(['the video track is missing']);
    expect(judgeOutput({ streams: [], durationSeconds: 2 }, want({ video: false, audio: false }), true)).toEqual([
      'it holds no audio or video track',
    ]);
  });

  test('a file shorter than the tolerance allows says how long it is', () => {
    expect(judgeOutput({ streams: av, durationSeconds: 50 }, want({ durationSeconds: 60 }), true)).toEqual([
      'it lasts 50.0 s of the expected 60.0 s',
    ]);
    expect(judgeOutput({ streams: av, durationSeconds: 57.5 }, want({ durationSeconds: 60 }), true)).toEqual([]);
  });

  test('the tolerance is two seconds or 5 %, whichever is more', () => {
    expect(durationTolerance(10)).toBe(2);
    expect(durationTolerance(600)).toBe(30);
  });

  test('an mp4 whose index comes after the media fails only when faststart was asked', () => {
    expect(judgeOutput({ streams: av, durationSeconds: 2 }, want(), false)).toEqual([
      'its index (moov) is not at the start of the file',
    ]);
    expect(judgeOutput({ streams: av, durationSeconds: 2 }, want({ faststart: false }), undefined)).toEqual([]);
  });

  test('without an expected duration the length is not judged', () => {
    expect(judgeOutput({ streams: av, durationSeconds: 0.1 }, want(), true)).toEqual([]);
  });
});
