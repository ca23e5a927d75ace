// How an A/V live DASH recording lines its two tracks up in the file (record/av-timeline.ts) and the
// ffmpeg arguments that make it (record/finalize.ts): a stretch one track lost keeps its time (a
// hole in that track only, the other stays in sync); a stretch both lost takes none; a timeline
// that restarts or sits absurdly far away still gives a bounded, ordered layout.
import { describe, expect, test } from '@jest/globals';
import { avTimeline, type Span } from '../src/record/av-timeline.js';
import { avFinalizeArgs, concatList, trackConcatList } from '../src/record/finalize.js';

const track = (name: 'video' | 'audio', spans: Span[], gaps: { at: number; seconds: number }[] = []) => ({
  name,
  parts: spans.map((_, i) => `part-${i}.mp4`),
  spans,
  gaps,
});

describe('the file timeline of a video and an audio track', () => {
  test('tracks recorded without loss: one stretch, each track one part, the later one offset by its start', () => {
    const t = avTimeline([track('video', [[100, 110]]), track('audio', [[100.021, 110.005]])]);
    expect(t.seconds).toBe(10.005);
    expect(t.tracks).toEqual([
      { offset: 0, end: 10, entries: [{ part: 'part-0.mp4' }] },
      { offset: 0.021, end: 10.005, entries: [{ part: 'part-0.mp4' }] },
    ]);
    expect(t.gaps).toEqual([]);
  });

  test('a segment only the audio lost keeps its time: the audio part before it lasts its media and the hole, the video is untouched', () => {
    const t = avTimeline([
      track('video', [[0, 20]]),
      track(
        'audio',
        [
          [0, 10],
          [11, 20],
        ],
        [{ at: 10, seconds: 1 }],
      ),
    ]);
    expect(t.seconds).toBe(20);
    expect(t.tracks[0]).toEqual({ offset: 0, end: 20, entries: [{ part: 'part-0.mp4' }] });
    expect(t.tracks[1]).toEqual({
      offset: 0,
      end: 20,
      entries: [{ part: 'part-0.mp4', duration: 11 }, { part: 'part-1.mp4' }],
    });
    expect(t.gaps).toEqual([{ at: 10, seconds: 1, track: 'audio' }]);
  });

  test('a stretch both tracks lost (a worker that died) takes no time: both next parts start where the first ended', () => {
    const t = avTimeline([
      track(
        'video',
        [
          [0, 10],
          [30, 40],
        ],
        [{ at: 10, seconds: 20 }],
      ),
      track(
        'audio',
        [
          [0.02, 10.01],
          [30.01, 40],
        ],
        [{ at: 9.99, seconds: 20 }],
      ),
    ]);
    expect(t.seconds).toBe(20.01);
    expect(t.tracks[0].entries).toEqual([{ part: 'part-0.mp4', duration: 10.01 }, { part: 'part-1.mp4' }]);
    expect(t.tracks[1]).toEqual({
      offset: 0.02,
      end: 20.01,
      entries: [{ part: 'part-0.mp4', duration: 10.0 }, { part: 'part-1.mp4' }],
    });
    // Each where its own track's media stops.
    expect(t.gaps).toEqual([
      { at: 10, seconds: 20, track: 'video' },
      { at: 10.01, seconds: 20, track: 'audio' },
    ]);
  });

  test('a gap before anything was recorded (from_start past the bound) is at the start of the file', () => {
    const t = avTimeline([track('video', [[5, 8]], [{ at: 0, seconds: 5 }]), track('audio', [[5, 8]])]);
    expect(t.gaps).toEqual([{ at: 0, seconds: 5, track: 'video' }]);
  });

  test("a track that began seconds after the other (nothing of it recorded before a worker died) lost the file's beginning: a gap at 0", () => {
    const t = avTimeline([
      track(
        'video',
        [
          [5, 8],
          [20, 24],
        ],
        [{ at: 3, seconds: 12 }],
      ),
      track('audio', [[20.01, 24]]),
    ]);
    expect(t.tracks[1].offset).toBe(3.01);
    expect(t.gaps).toEqual([
      { at: 0, seconds: 3.01, track: 'audio' },
      { at: 3, seconds: 12, track: 'video' },
    ]);
  });

  test('a timeline that restarted (a part before the previous one) follows on instead of overlapping; distant times stay finite', () => {
    const t = avTimeline([
      track('video', [
        [1e9, 1e9 + 10],
        [0, 5],
      ]),
      track('audio', [
        [1e9, 1e9 + 10],
        [3, 8],
      ]),
    ]);
    expect(t.seconds).toBe(15);
    for (const plan of t.tracks) {
      expect(plan.entries[0].duration).toBe(10);
      expect(plan.offset).toBe(0);
    }
  });

  test('parts without a span (a state written before spans existed) are left out rather than misplaced', () => {
    const t = avTimeline([
      { name: 'video', parts: ['a.mp4', 'b.mp4'], spans: [[0, 4]], gaps: [] },
      track('audio', [[0, 4]]),
    ]);
    expect(t.tracks[0].entries).toEqual([{ part: 'a.mp4' }]);
  });
});

describe('the ffmpeg command of an A/V recording', () => {
  test("a one-stream DASH recording names how long each part but the last lasts (ffmpeg would count an fMP4 part from the stream's time 0)", () => {
    expect(concatList(['part-0000.mp4', 'part-0001.mp4'], [2.044, 3])).toBe(
      "ffconcat version 1.0\nfile 'part-0000.mp4'\nduration 2.044\nfile 'part-0001.mp4'\n",
    );
    expect(concatList(['part-0000.ts', 'part-0001.ts'])).toBe(
      "ffconcat version 1.0\nfile 'part-0000.ts'\nfile 'part-0001.ts'\n",
    );
  });

  test('each track a concat list whose parts last their place in the file; video then audio, offset, stream copy, faststart', () => {
    expect(
      trackConcatList(
        { offset: 0, end: 12, entries: [{ part: 'part-0000.mp4', duration: 11 }, { part: "it's.mp4" }] },
        'audio',
      ),
    ).toBe("ffconcat version 1.0\nfile 'audio/part-0000.mp4'\nduration 11.000\nfile 'audio/it'\\''s.mp4'\n");
    expect(
      avFinalizeArgs(
        [
          { list: 'video.ffconcat', offset: 0 },
          { list: 'audio.ffconcat', offset: 0.021 },
        ],
        'recording.mp4',
        'mp4',
      ),
    ).toEqual([
      '-hide_banner',
      '-nostdin',
      '-y',
      '-loglevel',
      'error',
      '-f',
      'concat',
      '-safe',
      '0',
      '-i',
      'video.ffconcat',
      '-itsoffset',
      '0.021',
      '-f',
      'concat',
      '-safe',
      '0',
      '-i',
      'audio.ffconcat',
      '-map',
      '0:v',
      '-map',
      '1:a',
      '-c',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      'recording.mp4',
    ]);
    expect(
      avFinalizeArgs(
        [
          { list: 'v', offset: 0 },
          { list: 'a', offset: 0 },
        ],
        'r.mkv',
        'mkv',
      ).slice(-3),
    ).toEqual(['-f', 'matroska', 'r.mkv']);
  });
});
