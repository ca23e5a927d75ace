import { describe, expect, test } from '@jest/globals';
import { cacheTtlMs, earliestExpiry, urlExpiry } from '../src/services/media-expiry.js';

const T = 1_900_000_000; // a fixed Unix time in seconds

describe('the expiry written into a signed media URL', () => {
  test.each([
    ['googlevideo (YouTube) expire', `https://r1.googlevideo.com/videoplayback?expire=${T}&ei=x&sig=y`, T],
    ['CloudFront Expires (Loom, Streamable)', `https://cdn.example/v.mp4?Expires=${T}&Signature=s&Key-Pair-Id=k`, T],
    ['TikTok x-expires', `https://v16.tiktokcdn.com/a/b/?x-expires=${T}&x-signature=s`, T],
    [
      'Facebook / Instagram oe in hexadecimal',
      `https://scontent.cdninstagram.com/v.mp4?oh=00_x&oe=${T.toString(16).toUpperCase()}`,
      T,
    ],
    ['an Akamai token in the path (Vimeo)', `https://vod.akamaized.net/exp=${T}~acl=%2Fa%2A~hmac=ff/a/b.mp4`, T],
    ['an Akamai token in a parameter', `https://cdn.example/a.m3u8?hdnts=st=1~exp=${T}~acl=/*~hmac=ff`, T],
    [
      'Twitch clip token JSON',
      `https://clips.twitch.tv/v.mp4?sig=s&token=${encodeURIComponent(JSON.stringify({ expires: T, clip_uri: 'x' }))}`,
      T,
    ],
    [
      'S3 SigV4 X-Amz-Date + X-Amz-Expires',
      'https://b.s3.amazonaws.com/k?X-Amz-Date=20300317T172640Z&X-Amz-Expires=600&X-Amz-Signature=s',
      Date.UTC(2030, 2, 17, 17, 26, 40) / 1000 + 600,
    ],
    ['the earliest of two expiries in one URL', `https://cdn.example/exp=${T + 100}~hmac=1/v.mp4?expire=${T}`, T],
  ])('%s', (_name, url, expected) => {
    expect(urlExpiry(url)).toBe(expected);
  });

  test.each([
    ['an unsigned URL', 'https://cdn.example/v.mp4?quality=720'],
    ['a number that is no Unix time', 'https://cdn.example/v.mp4?expire=12345'],
    ['oe that is not 8 hex digits', 'https://cdn.example/v.mp4?oe=xyz'],
    ['not a URL', 'clip.mp4'],
  ])('%s carries none', (_name, url) => {
    expect(urlExpiry(url)).toBeUndefined();
  });

  test('a result expires with the earliest URL anywhere in it, thumbnails and sources alike', () => {
    const result = {
      url: 'https://page.example/watch?v=1',
      thumbnail: `https://i.example/t.jpg?expires=${T + 500}`,
      media: [
        {
          sources: [
            { url: `https://a.example/v.mp4?expire=${T + 60}` },
            { url: `https://a.example/a.m4a?expire=${T}` },
          ],
        },
      ],
    };
    expect(earliestExpiry(result)).toBe(T);
    expect(earliestExpiry({ media: [{ sources: [{ url: 'https://a.example/v.mp4' }] }] })).toBeUndefined();
  });
});

describe('how long an extract may be cached', () => {
  const now = T * 1000;
  test('EXTRACT_CACHE_SECONDS when no URL expires, or when they outlive it by the margin', () => {
    expect(cacheTtlMs(60, undefined, now, 30_000)).toBe(60_000);
    expect(cacheTtlMs(60, T + 3600, now, 30_000)).toBe(60_000);
  });
  test('cut to the earliest expiry less the margin', () => {
    expect(cacheTtlMs(60, T + 40, now, 30_000)).toBe(10_000);
  });
  test('zero (not cached) when the URLs expire within the margin or already have', () => {
    expect(cacheTtlMs(60, T + 20, now, 30_000)).toBe(0);
    expect(cacheTtlMs(60, T - 5, now, 30_000)).toBe(0);
  });
});
