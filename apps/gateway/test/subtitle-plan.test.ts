// The subtitle side of download planning as pure functions: what a track's own download does, and
// which of an item's tracks a language picks.
import { describe, expect, test } from '@jest/globals';
import { ReelayError, type StoredSubtitle } from '@reelay/contracts';
import { pickTracks, planSubtitleDownload } from '../src/services/subtitles.js';

const track = (
  language: string,
  format: StoredSubtitle['format'],
  extra: Partial<StoredSubtitle> = {},
): StoredSubtitle => ({
  kind: 'subtitle',
  url: `https://cdn.example.com/${language}-${format}-${extra.auto_generated ? 'auto' : 'manual'}`,
  language,
  format,
  media_index: 0,
  title: 'Clip',
  item_key: 'x:0',
  platform: 'generic',
  recorded_at: 0,
  ...extra,
});

function refusal(fn: () => unknown): ReelayError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReelayError);
    return err as ReelayError;
  }
  throw new Error('expected a refusal');
}

describe("a subtitle track's own download", () => {
  test('a file in its own format streams; another format, or an HLS track, is a job writing vtt unless srt is asked', () => {
    expect(planSubtitleDownload(track('en', 'vtt'), {})).toEqual({ kind: 'direct', mime_type: 'text/vtt', ext: 'vtt' });
    expect(planSubtitleDownload(track('en', 'srt'), { format: 'srt' })).toEqual({
      kind: 'direct',
      mime_type: 'application/x-subrip',
      ext: 'srt',
    });
    expect(planSubtitleDownload(track('en', 'srt'), { format: 'vtt' })).toMatchObject({
      kind: 'job',
      operation: 'convert',
      format: 'vtt',
    });
    expect(planSubtitleDownload(track('en', 'hls'), {})).toMatchObject({
      kind: 'job',
      operation: 'remux',
      format: 'vtt',
      input: { format: 'hls', language: 'en' },
    });
    expect(planSubtitleDownload(track('en', 'hls'), { format: 'srt' })).toMatchObject({ kind: 'job', format: 'srt' });
  });

  test('a segmented DASH track is listed but refused with the reason, as is a TTML conversion', () => {
    const dash = track('es', 'dash', { url: 'https://cdn.example.com/m.mpd#representation=sub-es', codecs: 'wvtt' });
    expect(refusal(() => planSubtitleDownload(dash, {})).message).toMatch(/segmented/);
    expect(refusal(() => planSubtitleDownload(track('ja', 'ttml'), { format: 'srt' })).message).toMatch(/TTML/);
    expect(planSubtitleDownload(track('ja', 'ttml'), {})).toEqual({
      kind: 'direct',
      mime_type: 'application/ttml+xml',
      ext: 'ttml',
    });
  });
});

describe('picking tracks by language', () => {
  const tracks = [
    track('en', 'hls'),
    track('en', 'vtt', { auto_generated: true }),
    track('en', 'srt'),
    track('pt-BR', 'vtt'),
    track('es', 'dash'),
    track('ja', 'ttml'),
  ];

  test("people's tracks win over machine ones, then sidecar files over playlists; case is forgiven", () => {
    expect(pickTracks(tracks, ['en', 'PT-br']).map((t) => [t.language, t.format, t.auto_generated ?? false])).toEqual([
      ['en', 'srt', false],
      ['pt-BR', 'vtt', false],
    ]);
  });

  test('a missing language names the ones the item has; segmented DASH and TTML say why they cannot be embedded', () => {
    expect(refusal(() => pickTracks(tracks, ['de'])).message).toBe(
      'This media item has no subtitles in "de"; it has: en, pt-BR, es, ja.',
    );
    expect(refusal(() => pickTracks([], ['de'])).message).toBe('This media item has no subtitles to embed.');
    expect(refusal(() => pickTracks(tracks, ['es'])).message).toMatch(/segmented/);
    expect(refusal(() => pickTracks(tracks, ['ja'])).message).toMatch(/TTML/);
  });
});
