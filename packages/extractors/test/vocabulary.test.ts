import { describe, expect, test } from '@jest/globals';
import { extOfMime, kindOfMime, mimeOfExt } from '../src/media-types.js';
import { isoDuration } from '@reelay/manifests';
import { frameRate, num, positive, positiveInt } from '../src/values.js';

describe('one answer for media types across every extractor', () => {
  test('an .opus file is Opus in Ogg, audio/ogg (RFC 7845), on pages, in yt-dlp formats and in Mastodon posts alike', () => {
    expect(mimeOfExt('opus')).toBe('audio/ogg');
    expect(mimeOfExt('opus', 'audio')).toBe('audio/ogg');
  });

  test('a container that holds either gets its audio type when the source is audio only', () => {
    expect(mimeOfExt('mp4')).toBe('video/mp4');
    expect(mimeOfExt('mp4', 'audio')).toBe('audio/mp4');
    expect(mimeOfExt('webm', 'audio')).toBe('audio/webm');
    expect(mimeOfExt('.M4A')).toBe('audio/mp4');
  });

  test('the overrides win where mime-db answers differently from what origins send', () => {
    expect(mimeOfExt('m4v')).toBe('video/mp4');
    expect(mimeOfExt('flac')).toBe('audio/flac');
    expect(extOfMime('audio/mpeg')).toBe('mp3');
    expect(extOfMime('video/quicktime')).toBe('mov');
    expect(extOfMime('audio/webm')).toBe('webm');
    expect(extOfMime('image/jpeg')).toBe('jpg');
    expect(extOfMime('audio/mp4; codecs="mp4a.40.2"')).toBe('m4a');
  });

  test('pages, scripts, playlists, segments, icons and SVG documents are not media', () => {
    for (const ext of ['html', 'js', 'json', 'svg', 'm3u', 'm3u8', 'pls', 'asx', 'ram', 'm4s', 'ico', 'mid', 'pdf', ''])
      expect(mimeOfExt(ext)).toBeUndefined();
    expect(kindOfMime('image/svg+xml')).toBeUndefined();
    expect(extOfMime('text/html')).toBeUndefined();
  });

  test('a MIME type is video, audio or an image by its top-level type, with the two application/ exceptions', () => {
    expect(kindOfMime('video/x-matroska')).toBe('video');
    expect(kindOfMime('audio/ogg')).toBe('audio');
    expect(kindOfMime('image/avif')).toBe('image');
    expect(kindOfMime('application/ogg')).toBe('audio');
    expect(kindOfMime('application/mp4')).toBe('video');
    expect(kindOfMime('application/octet-stream')).toBeUndefined();
  });
});

describe('one meaning for a number read from untyped data', () => {
  test('numbers and numeric strings are read; anything else is not a number', () => {
    expect(num(12)).toBe(12);
    expect(num(' 2.5 ')).toBe(2.5);
    expect(num('12px')).toBeUndefined();
    expect(num('')).toBeUndefined();
    expect(num(Number.NaN)).toBeUndefined();
    expect(num(null)).toBeUndefined();
  });

  test('zero and negative sizes mean unknown, and whole numbers are rounded', () => {
    expect(positive(0)).toBeUndefined();
    expect(positive(-3)).toBeUndefined();
    expect(positive('720')).toBe(720);
    expect(positiveInt(719.6)).toBe(720);
  });

  test('a frame rate may be a fraction, rounded to three decimals', () => {
    expect(frameRate('30000/1001')).toBe(29.97);
    expect(frameRate('25')).toBe(25);
    expect(frameRate(60)).toBe(60);
    expect(frameRate('30/0')).toBeUndefined();
    expect(frameRate('0')).toBeUndefined();
  });

  test('ISO 8601 durations read the same in DASH manifests and on pages', () => {
    expect(isoDuration('PT1H2M3.5S')).toBe(3723.5);
    expect(isoDuration('P1DT2H')).toBe(93_600);
    expect(isoDuration('PT0,5S')).toBe(0.5);
    expect(isoDuration('pt5m')).toBe(300);
    expect(isoDuration('P1Y')).toBe(365 * 86_400);
    for (const empty of ['P', 'PT', 'P1DT', 'PT-5S', '5 minutes', undefined])
      expect(isoDuration(empty)).toBeUndefined();
  });
});
