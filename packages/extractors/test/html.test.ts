import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { Egress } from '@reelay/egress';
import { serveFile, startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { createRegistry, type ExtractContext, type Extraction } from '../src/index.js';
import { parseHls } from '../src/hls.js';

let origin: Origin;
let media: TestMedia;
const egress = new Egress({ allowlist: ['127.0.0.1'] });
const registry = createRegistry();
let pageCount = 0;

beforeAll(async () => {
  [origin, media] = await Promise.all([startOrigin(), testMedia()]);
  origin.file('/media/muxed.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/media/audio.mp3', media.mp3, 'audio/mpeg');
  origin.file('/media/image.png', media.png, 'image/png');
  origin.file('/media/image.jpg', media.jpg, 'image/jpeg');
  for (const name of fs.readdirSync(media.hlsDir)) {
    origin.file(
      `/hls/${name}`,
      path.join(media.hlsDir, name),
      name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t',
    );
  }
});

afterAll(() => origin.close());

const u = (p: string) => origin.url(p);

/** Serves the HTML at a fresh path and extracts it through the registry, as the gateway does. */
async function extract(
  html: string,
  options: { type?: string; ctx?: Partial<ExtractContext> } = {},
): Promise<Extraction & { pageUrl: string }> {
  const pagePath = `/page/${++pageCount}`;
  origin.body(pagePath, html, options.type ?? 'text/html; charset=utf-8');
  const extraction = await registry.extract(new URL(u(pagePath)), { egress, endpoints: {}, ...options.ctx });
  return { ...extraction, pageUrl: u(pagePath) };
}

async function failure(
  html: string,
  options: { type?: string; ctx?: Partial<ExtractContext> } = {},
): Promise<ReelayError> {
  try {
    await extract(html, options);
  } catch (err) {
    expect(err).toBeInstanceOf(ReelayError);
    return err as ReelayError;
  }
  throw new Error('expected the extraction to fail');
}

const doc = (head: string, body = '') => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;
const meta = (property: string, content: string) => `<meta property="${property}" content="${content}">`;

describe('OpenGraph', () => {
  test('og:video prefers the secure URL and carries its type, size, duration and og:image thumbnail', async () => {
    const { result } = await extract(
      doc(
        meta('og:title', 'A clip') +
          meta('og:video', u('/media/plain.mp4')) +
          meta('og:video:secure_url', u('/media/muxed.mp4')) +
          meta('og:video:type', 'video/mp4') +
          meta('og:video:width', '1280') +
          meta('og:video:height', '720') +
          meta('video:duration', '42') +
          meta('og:image', u('/media/image.jpg')),
      ),
    );
    expect(result).toMatchObject({
      platform: 'generic',
      extract_profile: 'opengraph',
      content_type: 'video',
      title: 'A clip',
    });
    expect(result.media).toEqual([
      {
        index: 0,
        type: 'video',
        thumbnail: u('/media/image.jpg'),
        duration: 42,
        sources: [
          {
            quality: '720p',
            url: u('/media/muxed.mp4'),
            stream_profile: 'muxed_progressive',
            mime_type: 'video/mp4',
            ext: 'mp4',
            width: 1280,
            height: 720,
          },
        ],
      },
    ]);
  });

  test('a relative og:video resolves against a relative <base href>', async () => {
    const { result } = await extract(doc('<base href="/media/">' + meta('og:video', 'clips/a.mp4')));
    expect(result.media[0].sources[0].url).toBe(u('/media/clips/a.mp4'));
  });

  test('without a <base href>, relative URLs resolve against the page after redirects', async () => {
    origin.body('/deep/dir/page', doc(meta('og:video', 'clip.webm')), 'text/html');
    origin.redirect('/short', '/deep/dir/page');
    const { result, records } = await registry.extract(new URL(u('/short')), { egress, endpoints: {} });
    expect(result.media[0].sources[0]).toMatchObject({
      url: u('/deep/dir/clip.webm'),
      mime_type: 'video/webm',
      ext: 'webm',
    });
    expect(records[0].headers).toEqual({ referer: u('/deep/dir/page') });
  });

  test('og:video players (HTML pages, Flash, untyped pages) are not taken for media', async () => {
    const err = await failure(
      doc(
        meta('og:video', 'https://player.example/embed/1') +
          meta('og:video:type', 'text/html') +
          meta('og:video', 'https://player.example/player.swf') +
          meta('og:video', 'https://player.example/watch?v=1'),
      ),
    );
    expect(err.code).toBe('no_media_found');
  });

  test('og:audio is an audio-only item', async () => {
    const { result } = await extract(
      doc(meta('og:audio', u('/media/audio.mp3')) + meta('og:audio:type', 'audio/mpeg')),
    );
    expect(result.content_type).toBe('audio');
    expect(result.media[0].sources).toEqual([
      {
        quality: 'original',
        url: u('/media/audio.mp3'),
        stream_profile: 'audio_only',
        mime_type: 'audio/mpeg',
        ext: 'mp3',
        has_audio: true,
        has_video: false,
      },
    ]);
  });

  test('a page with only an og:image is that picture', async () => {
    const { result } = await extract(
      doc(meta('og:image', u('/media/image.png')) + meta('og:image:width', '64') + meta('og:image:height', '48')),
    );
    expect(result.content_type).toBe('image');
    expect(result.media[0].sources).toEqual([
      {
        quality: '64x48',
        url: u('/media/image.png'),
        stream_profile: 'image',
        mime_type: 'image/png',
        ext: 'png',
        width: 64,
        height: 48,
      },
    ]);
  });

  test('several og:image groups make a gallery, one picture per item', async () => {
    const { result } = await extract(
      doc(
        meta('og:image', u('/media/image.png')) +
          meta('og:image:type', 'image/png') +
          meta('og:image', u('/img/second')) +
          meta('og:image:secure_url', u('/media/image.jpg')),
      ),
    );
    expect(result.content_type).toBe('gallery');
    expect(result.media.map((m) => [m.type, m.sources.map((s) => s.url)])).toEqual([
      ['image', [u('/media/image.png')]],
      ['image', [u('/media/image.jpg')]],
    ]);
  });

  test('og:image is only the thumbnail when the page has a video', async () => {
    const { result } = await extract(
      doc(
        meta('og:image', u('/media/image.png')) +
          meta('og:image', u('/media/image.jpg')) +
          meta('og:video', u('/media/muxed.mp4')),
      ),
    );
    expect(result.content_type).toBe('video');
    expect(result.media).toHaveLength(1);
    expect(result.media[0].thumbnail).toBe(u('/media/image.png'));
  });
});

describe('Twitter card', () => {
  test('twitter:player:stream is a video with its content type, size, image and title', async () => {
    const { result } = await extract(
      doc(
        `<meta name="twitter:title" content="Tweeted"><meta name="twitter:player" content="https://x.example/embed">` +
          `<meta name="twitter:player:stream" content="${u('/media/muxed.mp4')}">` +
          `<meta name="twitter:player:stream:content_type" content='video/mp4; codecs="avc1.42E01E, mp4a.40.2"'>` +
          `<meta name="twitter:player:width" content="320"><meta name="twitter:player:height" content="240">` +
          `<meta name="twitter:image" content="/media/image.jpg">`,
      ),
    );
    expect(result).toMatchObject({ extract_profile: 'twitter_card', title: 'Tweeted', content_type: 'video' });
    expect(result.media[0]).toEqual({
      index: 0,
      type: 'video',
      thumbnail: u('/media/image.jpg'),
      sources: [
        {
          quality: '240p',
          url: u('/media/muxed.mp4'),
          stream_profile: 'muxed_progressive',
          mime_type: 'video/mp4',
          ext: 'mp4',
          codecs: 'avc1.42E01E, mp4a.40.2',
          width: 320,
          height: 240,
        },
      ],
    });
  });
});

describe('JSON-LD', () => {
  const ld = (value: unknown) => `<script type="application/ld+json">${JSON.stringify(value)}</script>`;

  test('a VideoObject gives its file, format, size, bitrate, duration, thumbnail and name but not its embedUrl', async () => {
    const { result } = await extract(
      doc(
        ld({
          '@context': 'https://schema.org',
          '@type': 'VideoObject',
          name: '  The   launch ',
          contentUrl: '/media/muxed.mp4',
          embedUrl: u('/embed/1'),
          encodingFormat: 'mp4',
          width: { '@type': 'QuantitativeValue', value: 320 },
          height: '240',
          bitrate: '900 kbps',
          contentSize: '2 MB',
          duration: 'PT1M30.5S',
          thumbnailUrl: ['data:image/png;base64,AAAA', '/media/image.jpg'],
        }),
      ),
    );
    expect(result).toMatchObject({ extract_profile: 'json_ld', title: 'The launch', content_type: 'video' });
    expect(result.media).toEqual([
      {
        index: 0,
        type: 'video',
        thumbnail: u('/media/image.jpg'),
        duration: 90.5,
        sources: [
          {
            quality: '240p',
            url: u('/media/muxed.mp4'),
            stream_profile: 'muxed_progressive',
            mime_type: 'video/mp4',
            ext: 'mp4',
            width: 320,
            height: 240,
            bitrate: 900_000,
            size: 2_000_000,
          },
        ],
      },
    ]);
  });

  test('an AudioObject is audio-only', async () => {
    const { result } = await extract(
      doc(
        ld({
          '@type': 'AudioObject',
          contentUrl: u('/podcast/episode'),
          encodingFormat: 'audio/mpeg',
          duration: 'PT2S',
        }),
      ),
    );
    expect(result.content_type).toBe('audio');
    expect(result.media[0]).toMatchObject({
      duration: 2,
      sources: [
        {
          url: u('/podcast/episode'),
          stream_profile: 'audio_only',
          mime_type: 'audio/mpeg',
          ext: 'mp3',
          has_video: false,
        },
      ],
    });
  });

  test('ImageObjects in @graph make a gallery, and the publisher logo is not one of them', async () => {
    const { result } = await extract(
      doc(
        ld({
          '@context': 'https://schema.org',
          '@graph': [
            { '@type': 'Organization', name: 'Site', logo: { '@type': 'ImageObject', url: u('/logo.png') } },
            { '@type': 'ImageObject', contentUrl: u('/media/image.png'), width: 64, height: 48 },
            { '@type': 'ImageObject', url: u('/media/image.jpg') },
          ],
        }) + meta('og:image', u('/og-crop.jpg')),
      ),
    );
    expect(result).toMatchObject({ extract_profile: 'json_ld', content_type: 'gallery' });
    expect(result.media.map((m) => m.sources.map((s) => [s.url, s.stream_profile]))).toEqual([
      [[u('/media/image.png'), 'image']],
      [[u('/media/image.jpg'), 'image']],
    ]);
  });

  test('media is found in top-level arrays, under @type arrays and one property down from an Article', async () => {
    const { result } = await extract(
      doc(
        ld([{ '@type': 'BreadcrumbList' }, { '@type': ['VideoObject', 'Thing'], contentUrl: u('/a.mp4') }]) +
          ld({
            '@type': 'NewsArticle',
            headline: 'News',
            image: 'https://img.example/hero.jpg',
            video: { '@type': 'http://schema.org/VideoObject', contentUrl: u('/b.webm'), name: 'Second' },
            hasPart: { '@type': 'WebPageElement', video: { '@type': 'VideoObject', contentUrl: u('/too-deep.mp4') } },
          }),
      ),
    );
    expect(result.content_type).toBe('gallery');
    expect(result.media.map((m) => [m.sources[0].url, m.title])).toEqual([
      [u('/a.mp4'), undefined],
      [u('/b.webm'), 'Second'],
    ]);
  });

  test("a watch page put in a VideoObject's contentUrl is not taken for the file", async () => {
    const err = await failure(
      doc(
        ld({
          '@type': 'VideoObject',
          contentUrl: 'https://video.example/watch?v=1',
          embedUrl: 'https://video.example/embed/1',
        }),
      ),
    );
    expect(err.code).toBe('no_media_found');
  });
});

describe('HTML5 media elements', () => {
  test('a <video> with several labelled <source>s is one item, best first, with its poster', async () => {
    const { result } = await extract(
      doc(
        '',
        `<video poster="/media/image.jpg" width="640" height="360">
           <source src="/v/480.mp4" type="video/mp4" res="480">
           <source src="/v/1080.mp4" type="video/mp4" label="1080p HD">
           <source src="/v/720.webm" type='video/webm; codecs="vp9, opus"' label="720p">
           <source src="/v/low.mp4" type="video/mp4" title="300k">
           <source src="/v/silent.mp4" type='video/mp4; codecs="avc1.4d401e"' label="360p">
           <source src="/v/sound.mp4" type='video/mp4; codecs="mp4a.40.2"' label="128k">
           <source src="blob:https://x.example/1">
           <source src="https://www.youtube.com/watch?v=abc" type="video/youtube">
         </video>`,
      ),
    );
    expect(result).toMatchObject({ extract_profile: 'html5', content_type: 'video' });
    expect(result.media).toHaveLength(1);
    expect(result.media[0].thumbnail).toBe(u('/media/image.jpg'));
    expect(result.media[0].sources.map((s) => [s.quality, s.url.replace(origin.base, ''), s.stream_profile])).toEqual([
      ['1080p', '/v/1080.mp4', 'muxed_progressive'],
      ['720p', '/v/720.webm', 'muxed_progressive'],
      ['480p', '/v/480.mp4', 'muxed_progressive'],
      ['360p', '/v/low.mp4', 'muxed_progressive'],
      ['360p', '/v/silent.mp4', 'video_only'],
      ['128k', '/v/sound.mp4', 'audio_only'],
    ]);
    expect(result.media[0].sources.find((s) => s.url.endsWith('/low.mp4'))).toMatchObject({
      bitrate: 300_000,
      width: 640,
      height: 360,
    });
    expect(result.media[0].sources[1]).toMatchObject({ mime_type: 'video/webm', ext: 'webm', codecs: 'vp9, opus' });
  });

  test("a video without a poster takes the page's og:image, else its twitter:image, as thumbnail", async () => {
    const both = await extract(
      doc(
        meta('og:image', '/og.jpg') + '<meta name="twitter:image" content="/tw.jpg">',
        '<video src="/a.mp4"></video><video src="/b.mp4"></video>',
      ),
    );
    expect(both.result.media.map((m) => m.thumbnail)).toEqual([u('/og.jpg'), undefined]);
    const twitterOnly = await extract(
      doc('<meta name="twitter:image" content="/tw.jpg">', '<video src="/a.mp4"></video>'),
    );
    expect(twitterOnly.result.media[0].thumbnail).toBe(u('/tw.jpg'));
  });

  test('an <audio> element is audio even when its file is an .mp4', async () => {
    const { result } = await extract(doc('', '<audio controls src="/media/voice.mp4"></audio>'));
    expect(result.content_type).toBe('audio');
    expect(result.media[0].sources[0]).toMatchObject({
      url: u('/media/voice.mp4'),
      stream_profile: 'audio_only',
      has_audio: true,
      has_video: false,
    });
  });

  test('separate video elements on one page make a gallery, one item per element', async () => {
    const { result } = await extract(
      doc(
        '',
        '<video src="/one.mp4"></video><p>text</p><video data-src="/two-lazy.mp4" /><amp-video><source src="/two.webm" type="video/webm"></amp-video>',
      ),
    );
    expect(result.content_type).toBe('gallery');
    expect(result.media.map((m) => m.sources.map((s) => s.url))).toEqual([
      [u('/one.mp4')],
      [u('/two-lazy.mp4')],
      [u('/two.webm')],
    ]);
  });

  test('entities in attributes are decoded before URLs are read', async () => {
    const { result } = await extract(
      doc('', '<video src="/play?id=7&amp;fmt=mp4&amp;sig=a%20b" poster="/p.jpg?a=1&amp;b=2"></video>'),
    );
    expect(result.media[0].sources[0].url).toBe(u('/play?id=7&fmt=mp4&sig=a%20b'));
    expect(result.media[0].thumbnail).toBe(u('/p.jpg?a=1&b=2'));
  });

  test('data:, blob: and javascript: URLs are not media', async () => {
    const err = await failure(
      doc(
        meta('og:video', 'javascript:alert(1)'),
        '<video src="blob:https://x.example/1"><source src="data:video/mp4;base64,AAAA"></video>',
      ),
    );
    expect(err.code).toBe('no_media_found');
  });
});

describe('merging what the methods found', () => {
  test('the same file found by OpenGraph and HTML5 is one item with both sets of details', async () => {
    const { result } = await extract(
      doc(
        meta('og:video', u('/media/muxed.mp4')) +
          meta('og:video:width', '320') +
          meta('og:video:height', '240') +
          meta('video:duration', '2'),
        `<video poster="/poster.jpg"><source src="/media/muxed.mp4"><source src="/media/muxed-small.mp4" label="144p"></video>`,
      ),
    );
    expect(result.extract_profile).toBe('html5');
    expect(result.content_type).toBe('video');
    expect(result.media).toHaveLength(1);
    expect(result.media[0]).toMatchObject({ thumbnail: u('/poster.jpg'), duration: 2 });
    expect(result.media[0].sources.map((s) => [s.url, s.quality])).toEqual([
      [u('/media/muxed.mp4'), '240p'],
      [u('/media/muxed-small.mp4'), '144p'],
    ]);
  });

  test('different files from different methods are separate items, the highest-priority method first', async () => {
    const { result } = await extract(
      doc(
        meta('og:video', u('/og.mp4')) +
          `<meta name="twitter:player:stream" content="${u('/tw.mp4')}">` +
          `<script type="application/ld+json">{"@type":"VideoObject","contentUrl":"/ld.mp4"}</script>`,
      ),
    );
    expect(result.extract_profile).toBe('json_ld');
    expect(result.media.map((m) => m.sources[0].url)).toEqual([u('/ld.mp4'), u('/tw.mp4'), u('/og.mp4')]);
  });

  test.each([
    ['og:title', `${meta('og:title', 'From OG')}<meta name="twitter:title" content="From Twitter">`, 'From OG'],
    ['JSON-LD name', `<meta name="twitter:title" content="From Twitter">`, 'From JSON-LD'],
    ['twitter:title', `<meta name="twitter:title" content="  From\n Twitter ">`, 'From Twitter'],
  ])('the title comes from %s before the lower ones', async (_source, head, expected) => {
    const ldName =
      expected === 'From Twitter'
        ? ''
        : `<script type="application/ld+json">{"@type":"VideoObject","name":"From JSON-LD","contentUrl":"/t.mp4"}</script>`;
    const { result } = await extract(doc(`<title>From title</title>${head}${ldName}`, '<video src="/t.mp4"></video>'));
    expect(result.title).toBe(expected);
  });

  test('the <title> is the last resort, trimmed and with whitespace collapsed', async () => {
    const { result } = await extract(doc('<title>\n  Page &amp;\n   title  </title>', '<video src="/t.mp4"></video>'));
    expect(result.title).toBe('Page & title');
  });

  test('every source is recorded with the page as Referer', async () => {
    const { records, pageUrl } = await extract(
      doc(meta('og:video', u('/r1.mp4')), '<video src="/r2.mp4"></video><audio src="/r3.mp3"></audio>'),
    );
    expect(records).toHaveLength(3);
    for (const record of records) expect(record.headers).toEqual({ referer: pageUrl });
  });
});

describe('pages without media and pages served oddly', () => {
  test('a page without media fails with no_media_found (422)', async () => {
    const err = await failure(doc('<title>Hello</title>' + meta('og:title', 'Hello'), '<p>Nothing to see.</p>'));
    expect(err.code).toBe('no_media_found');
    expect(err.status).toBe(422);
  });

  test('an HTML page served as application/octet-stream is still read as a page', async () => {
    const { result } = await extract(
      `\uFEFF\n  <!-- generated -->\n<HTML><head>${meta('og:video', u('/media/muxed.mp4'))}</head></HTML>`,
      { type: 'application/octet-stream' },
    );
    expect(result.extract_profile).toBe('opengraph');
  });

  test('an untyped body that is not HTML is not read as a page', async () => {
    const err = await failure(`just some text ${meta('og:video', u('/media/muxed.mp4'))}`, {
      type: 'application/octet-stream',
    });
    expect(err.code).toBe('no_media_found');
  });
});

describe('manifests linked from a page', () => {
  const logs = () => {
    const lines: { msg: string; fields?: Record<string, unknown> }[] = [];
    return { lines, log: (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, fields }) };
  };

  test('a manifest that fails is skipped and logged when the page has other media', async () => {
    const { lines, log } = logs();
    const { result } = await extract(
      doc(meta('og:video', u('/missing/master.m3u8')), '<video src="/media/muxed.mp4"></video>'),
      { ctx: { log } },
    );
    expect(result.media.map((m) => m.sources.map((s) => s.url))).toEqual([[u('/media/muxed.mp4')]]);
    expect(lines).toContainEqual({
      msg: 'page manifest skipped',
      fields: expect.objectContaining({ url: u('/missing/master.m3u8') }),
    });
  });

  test("when the page's only media is a manifest that fails, its error is the answer", async () => {
    const err = await failure(doc('', '<video><source src="/missing/only.mpd" type="application/dash+xml"></video>'));
    expect(err.code).toBe('content_not_found');
  });

  test('at most four manifests are fetched per page', async () => {
    const sources = Array.from({ length: 6 }, (_, i) => `<video src="/many/m${i}.m3u8"></video>`).join('');
    const err = await failure(doc('', sources));
    expect(err.code).toBe('content_not_found');
    expect([...origin.hits.keys()].filter((k) => k.startsWith('/many/')).sort()).toEqual([
      '/many/m0.m3u8',
      '/many/m1.m3u8',
      '/many/m2.m3u8',
      '/many/m3.m3u8',
    ]);
  });

  const hlsReady = (() => {
    try {
      parseHls(
        '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\na.ts\n#EXT-X-ENDLIST\n',
        new URL('http://127.0.0.1/x.m3u8'),
      );
      return true;
    } catch {
      return false;
    }
  })();

  (hlsReady ? test : test.todo)(
    'an HLS playlist in og:video is expanded, fetched and recorded with the page as Referer',
    async () => {
      let sentReferer: string | undefined;
      origin.route('/hls-ref/index.m3u8', (req, res) => {
        sentReferer = req.headers.referer;
        serveFile(req, res, path.join(media.hlsDir, 'index.m3u8'), 'application/vnd.apple.mpegurl');
      });
      const { result, records, pageUrl } = await extract(
        doc(meta('og:video', u('/hls-ref/index.m3u8')) + meta('og:image', u('/media/image.jpg'))),
      );
      expect(sentReferer).toBe(pageUrl);
      expect(result).toMatchObject({ extract_profile: 'opengraph', content_type: 'video' });
      expect(result.media).toEqual([
        expect.objectContaining({
          thumbnail: u('/media/image.jpg'),
          duration: 2,
          sources: [expect.objectContaining({ url: u('/hls-ref/index.m3u8'), stream_profile: 'hls' })],
        }),
      ]);
      expect(records.map((r) => r.headers)).toEqual([{ referer: pageUrl }]);
    },
  );

  test('a DASH manifest in a <source> becomes its representations', async () => {
    for (const name of fs.readdirSync(media.dashDir))
      origin.file(
        `/dash/${name}`,
        path.join(media.dashDir, name),
        name.endsWith('.mpd') ? 'application/dash+xml' : 'video/iso.segment',
      );
    const { result, records, pageUrl } = await extract(
      doc('', `<video poster="/p.jpg"><source src="/dash/manifest.mpd" type="application/dash+xml"></video>`),
    );
    expect(result).toMatchObject({ extract_profile: 'html5' });
    expect(result.media[0].thumbnail).toBe(u('/p.jpg'));
    expect(result.media[0].sources.length).toBeGreaterThanOrEqual(2);
    for (const s of result.media[0].sources)
      expect(s).toMatchObject({ stream_profile: 'dash', url: expect.stringContaining(u('/dash/manifest.mpd')) });
    for (const record of records) expect(record.headers).toEqual({ referer: pageUrl });
  });
});
