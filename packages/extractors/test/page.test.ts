import { describe, expect, test } from '@jest/globals';
import { parseBitrate, parseDuration, parseResolution, parseSize, parseTypeAttr, toNumber } from '../src/labels.js';
import { ogGroups } from '../src/opengraph.js';
import { metaFirst, parsePage } from '../src/page.js';

describe('reading a page in one pass', () => {
  test('the title is the document title with entities decoded, not an SVG icon title', () => {
    const page = parsePage(
      '<html><head><svg><title>icon</title></svg><title>Cats &amp; Dogs</title><title>second</title></head></html>',
    );
    expect(page.title).toBe('Cats & Dogs');
  });

  test('meta tags keep document order, lower-case keys and every repeated value', () => {
    const page = parsePage(`
      <meta property="OG:Video" content="a.mp4">
      <meta name="twitter:card" content="player">
      <meta property="og:video" content="b.mp4">
      <meta property="og:title" content="Q &amp; A">
      <meta itemprop="duration" content="PT1M">
      <meta property="og:empty">`);
    expect(page.meta.map((m) => m.key)).toEqual(['og:video', 'twitter:card', 'og:video', 'og:title', 'duration']);
    expect(page.metaByKey.get('og:video')).toEqual(['a.mp4', 'b.mp4']);
    expect(metaFirst(page, 'og:title')).toBe('Q & A');
  });

  test('only the first base href counts', () => {
    expect(parsePage('<base href="/media/"><base href="/other/">').baseHref).toBe('/media/');
  });

  test('JSON-LD blocks are parsed, comment wrappers and raw newlines tolerated, broken ones counted', () => {
    const page = parsePage(`
      <script type="application/ld+json">{"@type":"VideoObject","name":"a &amp; b"}</script>
      <script type="application/ld+json; charset=utf-8"><!-- {"@type":"AudioObject"} --></script>
      <script type="application/ld+json">{"description":"line one
line two"}</script>
      <script type="application/ld+json">{"@type": "VideoObject",}</script>
      <script>var x = {"@type":"VideoObject"};</script>`);
    expect(page.jsonLd).toEqual([
      { '@type': 'VideoObject', name: 'a &amp; b' },
      { '@type': 'AudioObject' },
      { description: 'line one line two' },
    ]);
    expect(page.jsonLdErrors).toBe(1);
  });

  test('media elements carry their attributes and their own source and track children only', () => {
    const page = parsePage(`
      <video SRC="/a.mp4" poster="/p.jpg?a=1&amp;b=2" width="640" height="360" class="x">
        <source src="/a-720.mp4" type='video/mp4; codecs="avc1.4d401f, mp4a.40.2"' label="720p">
        <track kind="captions" src="/c.vtt">
      </video>
      <picture><source srcset="/x.webp"></picture>
      <amp-audio src="/b.mp3"></amp-audio>
      <video data-src="/lazy.mp4" />
      <audio><source data-src="/c.ogg" type="audio/ogg"></audio>`);
    expect(page.media).toEqual([
      {
        kind: 'video',
        attrs: { src: '/a.mp4', poster: '/p.jpg?a=1&b=2', width: '640', height: '360' },
        sources: [{ src: '/a-720.mp4', type: 'video/mp4; codecs="avc1.4d401f, mp4a.40.2"', label: '720p' }],
        tracks: [{ kind: 'captions', src: '/c.vtt' }],
      },
      { kind: 'audio', attrs: { src: '/b.mp3' }, sources: [] },
      { kind: 'video', attrs: { 'data-src': '/lazy.mp4' }, sources: [] },
      { kind: 'audio', attrs: {}, sources: [{ 'data-src': '/c.ogg', type: 'audio/ogg' }] },
    ]);
  });

  test('a self-closed <video /> ends there, so later <source>s are not its own', () => {
    const page = parsePage(
      '<video src="/a.mp4" /><p><source src="/stray.mp4"></p><video><source src="/b.mp4"></video>',
    );
    expect(page.media.map((m) => m.sources)).toEqual([[], [{ src: '/b.mp4' }]]);
  });

  test('oEmbed links are kept without being fetched', () => {
    const page = parsePage(
      '<link rel="alternate" type="application/json+oembed" href="/oembed?url=x&amp;format=json"><link rel="alternate" type="application/rss+xml" href="/feed">',
    );
    expect(page.oembed).toEqual(['/oembed?url=x&format=json']);
  });
});

describe('OpenGraph structured properties', () => {
  const groups = (html: string) => ogGroups(parsePage(html).meta, 'og:video');

  test('each og:video starts a group and its sub-properties join it', () => {
    expect(
      groups(`
      <meta property="og:video" content="a.mp4"><meta property="og:video:type" content="video/mp4">
      <meta property="og:video" content="b.mp4"><meta property="og:video:width" content="1280">`),
    ).toEqual([
      { '': 'a.mp4', type: 'video/mp4' },
      { '': 'b.mp4', width: '1280' },
    ]);
  });

  test('a secure_url written before its og:video stays in the same group', () => {
    expect(
      groups(
        '<meta property="og:video:secure_url" content="https://a.mp4"><meta property="og:video" content="http://a.mp4">',
      ),
    ).toEqual([{ secure_url: 'https://a.mp4', '': 'http://a.mp4' }]);
  });

  test('a repeated sub-property without a root starts the next group', () => {
    expect(
      groups(
        '<meta property="og:video:url" content="a.mp4"><meta property="og:video:tag" content="x"><meta property="og:video:url" content="b.mp4">',
      ),
    ).toEqual([{ url: 'a.mp4' }, { url: 'b.mp4' }]);
  });
});

describe('reading player labels and schema.org values', () => {
  test.each([
    ['720p', { height: 720 }],
    ['1080p HD', { height: 1080 }],
    ['1080p60', { height: 1080 }],
    ['1920x1080', { width: 1920, height: 1080 }],
    ['4K', { height: 2160 }],
    ['HD', {}],
    ['1500k', {}],
  ])('the label %p names the resolution %p', (label, expected) => {
    expect(parseResolution(label)).toEqual(expected);
  });

  test.each([
    ['1500k', 1_500_000],
    ['HD 800 kbps', 800_000],
    ['2.5 Mbps', 2_500_000],
    ['720p', undefined],
    ['4K', undefined],
    ['plain', undefined],
  ])('the label %p names the bitrate %p', (label, expected) => {
    expect(parseBitrate(label)).toBe(expected);
  });

  test.each([
    ['PT1H2M3.5S', 3723.5],
    ['PT45S', 45],
    ['P0DT0H5M', 300],
    ['PT2,5S', 2.5],
    ['1:02:03', 3723],
    ['02:03', 123],
    ['90', 90],
    ['PT', undefined],
    ['soon', undefined],
  ])('the duration %p is %p seconds', (value, expected) => {
    expect(parseDuration(value)).toBe(expected);
  });

  test('sizes, QuantitativeValues and type attributes are read with their units', () => {
    expect(parseSize('12.5 MB')).toBe(12_500_000);
    expect(parseSize('2 MiB')).toBe(2_097_152);
    expect(parseSize('1024')).toBe(1024);
    expect(parseSize('big')).toBeUndefined();
    expect(toNumber({ '@type': 'QuantitativeValue', value: '1280' })).toBe(1280);
    expect(toNumber('720px')).toBe(720);
    expect(parseTypeAttr('Video/MP4; codecs="avc1.42E01E, mp4a.40.2"')).toEqual({
      mime: 'video/mp4',
      codecs: 'avc1.42E01E, mp4a.40.2',
    });
    expect(parseTypeAttr("audio/webm;codecs='opus'")).toEqual({ mime: 'audio/webm', codecs: 'opus' });
  });
});
