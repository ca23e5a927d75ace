import { describe, expect, test } from '@jest/globals';
import { contentDisposition, sanitizeBasename, withExtension } from '../src/http/disposition.js';

describe('download file names', () => {
  test.each([
    ['../../etc/passwd', 'etc passwd'],
    ['a/b\\c:d*e?f"g<h>i|j', 'a b c d e f g h i j'],
    ['  ..hidden.  ', 'hidden'],
    ['line\nbreak\ttab\u0007bell', 'linebreaktabbell'],
    ['', 'download'],
    ['...', 'download'],
    ['Ünïcödé 日本語 🎬', 'Ünïcödé 日本語 🎬'],
  ])('%j is sanitised to %j', (raw, expected) => {
    expect(sanitizeBasename(raw)).toBe(expected);
  });

  test('long names are cut to 150 characters without splitting a character', () => {
    const name = sanitizeBasename('🎬'.repeat(400));
    expect([...name]).toHaveLength(150);
  });

  test('extensions are added only when they are plain tokens', () => {
    expect(withExtension('clip', 'MP4')).toBe('clip.mp4');
    expect(withExtension('clip', 'mp4;rm -rf')).toBe('clip');
    expect(withExtension('clip', undefined)).toBe('clip');
  });

  test('Content-Disposition has an ASCII fallback and the UTF-8 name', () => {
    expect(contentDisposition('Café "Noir" 100%.mp4')).toBe(`attachment; filename="Caf_ _Noir_ 100_.mp4"; filename*=UTF-8''Caf%C3%A9%20%22Noir%22%20100%25.mp4`);
    expect(contentDisposition("it's (ok).mp3")).toBe(`attachment; filename="it's (ok).mp3"; filename*=UTF-8''it%27s%20%28ok%29.mp3`);
  });
});
