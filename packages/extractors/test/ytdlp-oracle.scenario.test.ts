// yt-dlp's generic extractor as an oracle: on our own local pages and manifests, every format
// Debian's yt-dlp lists must be one of our sources, with the same height. On galleries we go beyond
// it (it finds nothing there).
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Egress } from '@reelay/egress';
import { describeWithTools, startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { createRegistry, type Extraction } from '../src/index.js';

const run = promisify(execFile);
const describeOracle = (name: string, fn: () => void) =>
  describeWithTools(name, [{ bin: 'yt-dlp', install: 'apt-get install yt-dlp' }], fn);

interface YtFormat {
  format_id?: string;
  url?: string;
  height?: number | null;
  protocol?: string;
  manifest_url?: string;
}
interface YtInfo extends YtFormat {
  _type?: string;
  formats?: YtFormat[];
  entries?: YtInfo[];
}

async function ytdlp(url: string): Promise<YtInfo | undefined> {
  try {
    const { stdout } = await run('yt-dlp', ['-J', '--no-playlist', '--no-warnings', '--socket-timeout', '5', url], {
      timeout: 60_000,
      maxBuffer: 8 << 20,
    });
    return JSON.parse(stdout) as YtInfo;
  } catch {
    return undefined; // "Unsupported URL" and the like: yt-dlp found nothing
  }
}

function ytFormats(info: YtInfo): YtFormat[] {
  const entries = info._type === 'playlist' ? (info.entries ?? []) : [info];
  return entries.flatMap((e) => e.formats ?? (e.url ? [e] : []));
}

/** The URL of our source that should correspond to a yt-dlp format. */
function expectedUrl(f: YtFormat): string {
  if (f.protocol === 'http_dash_segments' && f.manifest_url && f.format_id) {
    return `${f.manifest_url.split('#')[0]}#representation=${encodeURIComponent(f.format_id.replace(/^dash-/, ''))}`;
  }
  return f.url!;
}

let origin: Origin;
let media: TestMedia;
const egress = new Egress({ allowlist: ['127.0.0.1'] });
const registry = createRegistry();
const extract = (url: string): Promise<Extraction> => registry.extract(new URL(url), { egress, endpoints: {} });

const HLS_MASTER = `#EXTM3U
#EXT-X-VERSION:4
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="audio/en.m3u8"
#EXT-X-STREAM-INF:BANDWIDTH=2800000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",AUDIO="aud"
v720/index.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2",AUDIO="aud"
v360/index.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=1400000,RESOLUTION=854x480
https://cdn.example/v480/index.m3u8
`;

const DASH_SINGLE_FILE = `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT2S" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">
  <Period>
    <AdaptationSet mimeType="video/mp4" codecs="avc1.64001e">
      <Representation id="v360" bandwidth="600000" width="640" height="360"><BaseURL>video-only.mp4</BaseURL><SegmentBase indexRange="0-100"/></Representation>
    </AdaptationSet>
    <AdaptationSet mimeType="audio/mp4" codecs="mp4a.40.2">
      <Representation id="a96" bandwidth="96000"><BaseURL>audio-only.m4a</BaseURL><SegmentBase indexRange="0-100"/></Representation>
    </AdaptationSet>
  </Period>
</MPD>`;

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/media/song.mp3', media.mp3, 'audio/mpeg');
  origin.file('/media/video-only.mp4', media.videoOnlyMp4, 'video/mp4');
  origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
  origin.body('/media/master.m3u8', HLS_MASTER, 'application/vnd.apple.mpegurl');
  origin.body('/media/single.mpd', DASH_SINGLE_FILE, 'application/dash+xml');
  for (const name of fs.readdirSync(media.dashDir))
    origin.file(
      `/dash/${name}`,
      path.join(media.dashDir, name),
      name.endsWith('.mpd') ? 'application/dash+xml' : 'video/mp4',
    );
  origin.body(
    '/og.html',
    `<html><head><title>OG</title><meta property="og:title" content="An OG clip"><meta property="og:video" content="/media/clip.mp4"><meta property="og:video:type" content="video/mp4"><meta property="og:video:width" content="320"><meta property="og:video:height" content="240"></head><body></body></html>`,
    'text/html',
  );
  origin.body(
    '/html5.html',
    `<html><head><title>Two qualities</title></head><body><video poster="/p.jpg" controls><source src="/media/clip.mp4" type="video/mp4" label="240p"><source src="/media/video-only.mp4" type="video/mp4" label="360p"></video></body></html>`,
    'text/html',
  );
  origin.body(
    '/audio.html',
    `<html><head><title>Song</title></head><body><audio controls src="/media/song.mp3"></audio></body></html>`,
    'text/html',
  );
  // Absolute: yt-dlp 2023.03 does not resolve a relative contentUrl (we do; html.test.ts covers it).
  origin.body(
    '/jsonld.html',
    `<html><head><title>LD</title><script type="application/ld+json">{"@context":"https://schema.org","@type":"VideoObject","name":"LD clip","contentUrl":"${origin.url('/media/clip.mp4')}","height":240,"width":320,"thumbnailUrl":"/t.jpg","duration":"PT2S"}</script></head><body></body></html>`,
    'text/html',
  );
  origin.body(
    '/twitter.html',
    `<html><head><title>TW</title><meta name="twitter:card" content="player"><meta name="twitter:player:stream" content="/media/clip.mp4"><meta name="twitter:player:stream:content_type" content="video/mp4"></head><body></body></html>`,
    'text/html',
  );
  origin.body(
    '/hls-page.html',
    `<html><head><title>HLS page</title></head><body><video><source src="/media/master.m3u8" type="application/x-mpegURL"></video></body></html>`,
    'text/html',
  );
  origin.body(
    '/gallery.html',
    `<html><head><title>Pictures</title><meta property="og:image" content="/a.jpg"><meta property="og:image" content="/b.jpg"><meta property="og:image" content="/c.png"></head><body></body></html>`,
    'text/html',
  );
});

afterAll(() => origin.close());

describeOracle("yt-dlp's generic extractor as an oracle", () => {
  test.each([
    ['a direct video file', '/media/clip.mp4'],
    ['a direct audio file', '/media/song.mp3'],
    ['an OpenGraph page', '/og.html'],
    ['an HTML5 page with several sources', '/html5.html'],
    ['an HTML5 audio page', '/audio.html'],
    ['a JSON-LD page', '/jsonld.html'],
    ['a Twitter player card', '/twitter.html'],
    ['an HLS master with an audio group', '/media/master.m3u8'],
    ['a page linking an HLS master', '/hls-page.html'],
    ['a DASH manifest of single files', '/media/single.mpd'],
    ['a segmented DASH manifest made by ffmpeg', '/dash/manifest.mpd'],
  ])('on %s every yt-dlp format is one of our sources', async (_kind, pathname) => {
    const url = origin.url(pathname);
    const [info, ours] = await Promise.all([ytdlp(url), extract(url)]);
    expect(info).toBeDefined();
    const formats = ytFormats(info!);
    expect(formats.length).toBeGreaterThan(0);
    const sources = ours.result.media.flatMap((m) => m.sources);
    for (const f of formats) {
      const source = sources.find((s) => s.url === expectedUrl(f));
      expect({ format: f.format_id, url: expectedUrl(f), found: Boolean(source) }).toEqual({
        format: f.format_id,
        url: expectedUrl(f),
        found: true,
      });
      if (f.height)
        expect({ format: f.format_id, height: source!.height }).toEqual({ format: f.format_id, height: f.height });
    }
  });

  test('on a page of several pictures we find a gallery of every picture, and anything yt-dlp finds is among them', async () => {
    const url = origin.url('/gallery.html');
    const [info, ours] = await Promise.all([ytdlp(url), extract(url)]);
    expect(ours.result.content_type).toBe('gallery');
    expect(
      ours.result.media.map((m) => ({
        type: m.type,
        sources: m.sources.map((s) => ({ url: s.url, stream_profile: s.stream_profile, mime_type: s.mime_type })),
      })),
    ).toEqual([
      { type: 'image', sources: [{ url: origin.url('/a.jpg'), stream_profile: 'image', mime_type: 'image/jpeg' }] },
      { type: 'image', sources: [{ url: origin.url('/b.jpg'), stream_profile: 'image', mime_type: 'image/jpeg' }] },
      { type: 'image', sources: [{ url: origin.url('/c.png'), stream_profile: 'image', mime_type: 'image/png' }] },
    ]);
    // yt-dlp's generic extractor lists no pictures today; if a later version does, they must be ours too.
    const ourUrls = ours.result.media.flatMap((m) => m.sources.map((s) => s.url));
    for (const f of info ? ytFormats(info) : [])
      expect({ format: f.format_id, found: ourUrls.includes(expectedUrl(f)) }).toEqual({
        format: f.format_id,
        found: true,
      });
  });
});
