// The body helpers behind "unknown fields are refused" and x-error-code, on schemas of every shape the
// routes use (plain, strict, nested, arrays, unions, pipes, records).
import { describe, expect, test } from '@jest/globals';
import { z } from 'zod';
import { ClipSchema, DownloadRequestSchema, ExtractRequestSchema } from '@reelay/contracts';
import { errorCodeAt, unknownFields } from '../src/http/body-fields.js';

describe('unknownFields', () => {
  test('names the fields a plain (stripping) object does not take, and nothing for one it does', () => {
    expect(unknownFields(ExtractRequestSchema, { url: 'http://x/' })).toEqual([]);
    expect(unknownFields(ExtractRequestSchema, { url: 'http://x/', admin: true, role: 1 })).toEqual(['admin', 'role']);
  });

  test('walks into nested objects, arrays and records, with dotted paths', () => {
    const schema = z.object({
      a: z.object({ b: z.number() }).optional(),
      list: z.array(z.object({ c: z.string() })),
      map: z.record(z.string(), z.object({ d: z.boolean() })),
    });
    expect(
      unknownFields(schema, {
        a: { b: 1, x: 1 },
        list: [{ c: 'y' }, { c: 'z', y: 2 }],
        map: { k: { d: true, z: 3 } },
        top: 0,
      }),
    ).toEqual(['a.x', 'list.1.y', 'map.k.z', 'top']);
    expect(unknownFields(DownloadRequestSchema, { url: 'http://x/', clip: { start: 0, end: 1, speed: 2 } })).toEqual([
      'clip.speed',
    ]);
  });

  test('a loose object or catchall takes any field; a union is judged by the option the value fits best', () => {
    expect(unknownFields(z.looseObject({ a: z.string() }), { a: 'x', b: 1 })).toEqual([]);
    const union = z.union([z.object({ url: z.string() }), z.object({ video_url: z.string(), audio_url: z.string() })]);
    expect(unknownFields(union, { video_url: 'v', audio_url: 'a' })).toEqual([]);
    expect(unknownFields(union, { url: 'u', extra: 1 })).toEqual(['extra']);
  });

  test('looks through wrappers: optional, default, pipe, lazy', () => {
    const inner = z.object({ a: z.number() });
    for (const schema of [inner.optional(), inner.default({ a: 1 }), inner.pipe(z.any()), z.lazy(() => inner)])
      expect(unknownFields(schema, { a: 1, b: 2 })).toEqual(['b']);
  });

  test('values that are not objects name nothing (the schema refuses them itself)', () => {
    expect(unknownFields(ExtractRequestSchema, 'x')).toEqual([]);
    expect(unknownFields(ExtractRequestSchema, null)).toEqual([]);
  });
});

describe('errorCodeAt', () => {
  test("follows an issue's path to the field's x-error-code", () => {
    expect(errorCodeAt(ExtractRequestSchema, ['url'])).toBe('invalid_url');
    expect(errorCodeAt(DownloadRequestSchema, ['clip', 'start'])).toBe('invalid_clip');
    expect(errorCodeAt(ClipSchema, ['end'])).toBe('invalid_clip');
  });

  test('is undefined for a field without one, or a path the schema does not have', () => {
    expect(errorCodeAt(DownloadRequestSchema, ['filename'])).toBeUndefined();
    expect(errorCodeAt(DownloadRequestSchema, ['nope', 'deeper'])).toBeUndefined();
    expect(errorCodeAt(z.object({ a: z.string().meta({ 'x-error-code': 'not_a_code' }) }), ['a'])).toBeUndefined();
  });
});
