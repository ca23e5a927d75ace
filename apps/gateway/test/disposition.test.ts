import { describe, expect, test } from '@jest/globals';
import { parse } from 'content-disposition';
import { mediaFilename } from '@reelay/contracts';
import { contentDisposition, sanitizeBasename } from '../src/http/disposition.js';

describe('download file names', () => {
  test.each([
    ['../../etc/passwd', 'etc passwd'],
    ['a/b\\c:d*e?f"g<h>i|j', 'a b c d e f g h i j'],
    ['  ..hidden.  ', 'hidden'],
    ['line\nbreak\ttab\u0007bell', 'linebreaktabbell'],
    ['', 'download'],
    ['...', 'download'],
    ['Ünïcödé 日本語 🎬', 'Ünïcödé 日本語 🎬'],
    ['clip\u202egpj.exe', 'clipgpj.exe'],
    ['\u2066a\u2069\u200e\u200fb\u061c', 'ab'],
    ['a\ud800b', 'a\ufffdb'],
    ['lone low \udc00 and pair 🎬', 'lone low \ufffd and pair 🎬'],
    ['👩\u200d💻 dev', '👩\u200d💻 dev'],
  ])('%j is sanitised to %j', (raw, expected) => {
    expect(sanitizeBasename(raw)).toBe(expected);
  });

  test('long names are cut to 150 characters without splitting a character', () => {
    const name = sanitizeBasename('🎬'.repeat(400));
    expect([...name]).toHaveLength(150);
  });

  test('extensions are added only when they are plain tokens', () => {
    expect(mediaFilename('clip', 'MP4')).toBe('clip.mp4');
    expect(mediaFilename('clip', 'mp4;rm -rf')).toBe('clip');
    expect(mediaFilename('clip', undefined)).toBe('clip');
  });

  test('Content-Disposition has an ASCII fallback and the UTF-8 name', () => {
    expect(contentDisposition('Café "Noir" 100%.mp4')).toBe(
      `attachment; filename="Caf_ Noir 100_.mp4"; filename*=UTF-8''Caf%C3%A9%20Noir%20100%25.mp4`,
    );
  });

  test('a name cut to the limit keeps the extension added after the cut', () => {
    const filename = mediaFilename(sanitizeBasename('a'.repeat(200)), 'mp4');
    expect(contentDisposition(filename)).toBe(`attachment; filename=${'a'.repeat(150)}.mp4`);
  });

  test('a plain ASCII name needs no filename* parameter', () => {
    expect(contentDisposition("it's (ok).mp3")).toBe(`attachment; filename="it's (ok).mp3"`);
  });

  test('Content-Disposition never throws, even for a stored name with a lone surrogate or a path', () => {
    expect(contentDisposition('x\ud800.webm')).toBe(`attachment; filename=x_.webm; filename*=UTF-8''x%EF%BF%BD.webm`);
    expect(contentDisposition('../../etc/passwd')).toBe('attachment; filename="etc passwd"');
  });

  test('the header parses back to the name with the content-disposition package', () => {
    const name = 'Ünïcödé 日本語 🎬 "q".mp4';
    expect(parse(contentDisposition(name)).parameters.filename).toBe(sanitizeBasename(name));
  });
});
