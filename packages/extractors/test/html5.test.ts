import { describe, expect, test } from '@jest/globals';
import { html5Candidates } from '../src/html5.js';
import { parsePage } from '../src/page.js';

const BASE = new URL('https://www.example.com/watch/page.html');
const sourcesOf = (html: string) =>
  html5Candidates(parsePage(html).media, BASE).map((c) => c.sources.map((s) => ({ url: s.url, height: s.height })));

describe('HTML5 media elements', () => {
  test('a lazy <source> with its URL in data-video-src or data-source is a rendition, as on the element itself', () => {
    const html = `<video preload="none">
      <source data-video-src="/clips/720.mp4" type="video/mp4" label="720p">
      <source data-source="/clips/360.mp4" type="video/mp4" label="360p">
      <source src="/clips/240.mp4" data-src="/clips/unused.mp4" type="video/mp4" label="240p">
    </video>`;
    expect(sourcesOf(html)).toEqual([
      [
        { url: 'https://www.example.com/clips/720.mp4', height: 720 },
        { url: 'https://www.example.com/clips/360.mp4', height: 360 },
        { url: 'https://www.example.com/clips/240.mp4', height: 240 },
      ],
    ]);
  });

  test("a <video src> typed as HLS or DASH by the element's own type attribute is a manifest, extension or not", () => {
    const html = `<video src="https://stream.example.com/playlist?id=42" type="application/x-mpegURL"></video>
      <video src="/vod/manifest?id=7" type="application/dash+xml"></video>
      <video src="/plain/clip.mp4" type="video/mp4"></video>`;
    expect(html5Candidates(parsePage(html).media, BASE).map((c) => c.sources.map((s) => [s.url, s.manifest]))).toEqual([
      [['https://stream.example.com/playlist?id=42', 'hls']],
      [['https://www.example.com/vod/manifest?id=7', 'dash']],
      [['https://www.example.com/plain/clip.mp4', undefined]],
    ]);
  });
});
