import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { Egress } from '@reelay/egress';
import { startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { dashManifest, parseMpd } from '../src/dash.js';
import { createRegistry, fetchDocument } from '../src/index.js';

const MPD_URL = new URL('https://cdn.example.com/vod/show/manifest.mpd?token=abc#t=10');
const MANIFEST = 'https://cdn.example.com/vod/show/manifest.mpd?token=abc';

const mpd = (body: string, attrs = 'type="static" mediaPresentationDuration="PT1M2.5S"') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" ${attrs}>${body}</MPD>`;

const ONE_FILE_PAIR = mpd(`
  <Period id="1">
    <AdaptationSet contentType="video" mimeType="video/mp4" frameRate="30000/1001">
      <Representation id="v720" codecs="avc1.64001f" bandwidth="2500000" width="1280" height="720">
        <BaseURL>video_720.mp4</BaseURL>
        <SegmentBase indexRange="800-1500"><Initialization range="0-799"/></SegmentBase>
      </Representation>
      <Representation id="v360" codecs="avc1.4d401e" bandwidth="700000" width="640" height="360">
        <BaseURL>video_360.mp4</BaseURL>
      </Representation>
    </AdaptationSet>
    <AdaptationSet mimeType="audio/mp4" lang="en" audioSamplingRate="48000">
      <Representation id="a128" codecs="mp4a.40.2" bandwidth="128000">
        <BaseURL>audio_en.m4a</BaseURL>
        <SegmentBase indexRange="700-900"/>
      </Representation>
    </AdaptationSet>
  </Period>`);

describe('single-file DASH representations', () => {
  test('representations that are one file each become video-only and audio-only progressive sources', () => {
    const [item, ...rest] = parseMpd(ONE_FILE_PAIR, MPD_URL);
    expect(rest).toEqual([]);
    expect(item.type).toBe('video');
    expect(item.duration).toBe(62.5);
    expect(item.sources).toEqual([
      {
        url: 'https://cdn.example.com/vod/show/video_720.mp4',
        stream_profile: 'video_only',
        mime_type: 'video/mp4',
        ext: 'mp4',
        codecs: 'avc1.64001f',
        bitrate: 2500000,
        language: undefined,
        has_audio: false,
        has_video: true,
        width: 1280,
        height: 720,
        fps: 29.97,
      },
      {
        url: 'https://cdn.example.com/vod/show/video_360.mp4',
        stream_profile: 'video_only',
        mime_type: 'video/mp4',
        ext: 'mp4',
        codecs: 'avc1.4d401e',
        bitrate: 700000,
        language: undefined,
        has_audio: false,
        has_video: true,
        width: 640,
        height: 360,
        fps: 29.97,
      },
      {
        url: 'https://cdn.example.com/vod/show/audio_en.m4a',
        stream_profile: 'audio_only',
        mime_type: 'audio/mp4',
        ext: 'm4a',
        codecs: 'mp4a.40.2',
        bitrate: 128000,
        language: 'en',
        has_audio: true,
        has_video: false,
      },
    ]);
  });

  test('a single file whose codecs hold both video and audio is muxed progressive', () => {
    const text = mpd(
      `<Period><AdaptationSet mimeType="video/webm"><Representation id="1" codecs="vp9,opus" bandwidth="900000" width="854" height="480"><BaseURL>both.webm</BaseURL></Representation></AdaptationSet></Period>`,
    );
    expect(parseMpd(text, MPD_URL)[0].sources[0]).toMatchObject({
      stream_profile: 'muxed_progressive',
      ext: 'webm',
      has_audio: true,
      has_video: true,
      height: 480,
    });
  });

  test('a representation with neither segments nor any BaseURL names no file and is skipped', () => {
    const text = mpd(
      `<Period><AdaptationSet mimeType="video/mp4"><Representation id="1" codecs="avc1.4d401e" bandwidth="1"/><Representation id="2" codecs="avc1.4d401e" bandwidth="2"><BaseURL>v.mp4</BaseURL></Representation></AdaptationSet></Period>`,
    );
    expect(parseMpd(text, MPD_URL)[0].sources.map((s) => s.url)).toEqual(['https://cdn.example.com/vod/show/v.mp4']);
  });
});

describe('segmented DASH representations', () => {
  test('SegmentTemplate with $Number$ makes dash sources named by representation id in the manifest URL', () => {
    const text = mpd(`
      <Period>
        <AdaptationSet mimeType="video/mp4" codecs="avc1.4d401f">
          <SegmentTemplate timescale="1000" duration="4000" startNumber="1" initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/$Number%05d$.m4s"/>
          <Representation id="video/1080 p" bandwidth="5000000" width="1920" height="1080"/>
          <Representation id="v480" bandwidth="1000000" width="854" height="480"/>
        </AdaptationSet>
      </Period>`);
    const [item] = parseMpd(text, MPD_URL);
    expect(item.sources.map((s) => [s.url, s.stream_profile, s.height])).toEqual([
      [`${MANIFEST}#representation=video%2F1080%20p`, 'dash', 1080],
      [`${MANIFEST}#representation=v480`, 'dash', 480],
    ]);
    expect(item.sources[0]).toMatchObject({
      has_video: true,
      has_audio: false,
      codecs: 'avc1.4d401f',
      mime_type: 'video/mp4',
    });
  });

  test('SegmentTemplate with $Time$ and a SegmentTimeline makes segmented audio and video sources', () => {
    const text = mpd(`
      <Period>
        <AdaptationSet contentType="video" mimeType="video/mp4">
          <Representation id="v" codecs="hev1.1.6.L93.B0" bandwidth="3000000" width="1920" height="1080">
            <BaseURL>video/</BaseURL>
            <SegmentTemplate timescale="90000" initialization="init.mp4" media="$Time$.m4s">
              <SegmentTimeline><S t="0" d="180000" r="2"/><S d="90000"/></SegmentTimeline>
            </SegmentTemplate>
          </Representation>
        </AdaptationSet>
        <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="de">
          <SegmentTemplate timescale="48000" initialization="a/init.mp4" media="a/$Time$.m4s">
            <SegmentTimeline><S t="0" d="96000" r="3"/></SegmentTimeline>
          </SegmentTemplate>
          <Representation id="a" codecs="mp4a.40.2" bandwidth="96000"/>
        </AdaptationSet>
      </Period>`);
    const [item] = parseMpd(text, MPD_URL);
    expect(item.sources).toEqual([
      expect.objectContaining({
        url: `${MANIFEST}#representation=v`,
        stream_profile: 'dash',
        has_video: true,
        has_audio: false,
        width: 1920,
      }),
      expect.objectContaining({
        url: `${MANIFEST}#representation=a`,
        stream_profile: 'dash',
        has_video: false,
        has_audio: true,
        language: 'de',
        ext: 'm4a',
        bitrate: 96000,
      }),
    ]);
  });

  test('SegmentList representations are segmented even with a BaseURL', () => {
    const text = mpd(`
      <Period>
        <AdaptationSet mimeType="video/mp4">
          <Representation id="list" codecs="avc1.4d401e" bandwidth="800000" width="640" height="360">
            <BaseURL>list/</BaseURL>
            <SegmentList duration="10"><Initialization sourceURL="init.mp4"/><SegmentURL media="s1.m4s"/><SegmentURL media="s2.m4s"/></SegmentList>
          </Representation>
        </AdaptationSet>
      </Period>`);
    expect(parseMpd(text, MPD_URL)[0].sources).toEqual([
      expect.objectContaining({ url: `${MANIFEST}#representation=list`, stream_profile: 'dash' }),
    ]);
  });

  test('a SegmentTemplate on the Period makes every representation below it segmented', () => {
    const text = mpd(
      `<Period><SegmentTemplate media="$RepresentationID$-$Number$.m4s" duration="4"/><AdaptationSet mimeType="audio/mp4"><Representation id="a1" codecs="mp4a.40.2" bandwidth="64000"><BaseURL>a/</BaseURL></Representation></AdaptationSet></Period>`,
    );
    expect(parseMpd(text, MPD_URL)[0].sources[0]).toMatchObject({
      stream_profile: 'dash',
      url: `${MANIFEST}#representation=a1`,
    });
  });

  test('representations without an id get a stable id from their position', () => {
    const text = mpd(`
      <Period><AdaptationSet mimeType="audio/mp4"><SegmentTemplate media="$Bandwidth$/$Number$.m4s" duration="4"/>
        <Representation codecs="mp4a.40.2" bandwidth="64000"/><Representation codecs="mp4a.40.2" bandwidth="128000"/>
      </AdaptationSet></Period>`);
    const urls = () => parseMpd(text, MPD_URL)[0].sources.map((s) => s.url);
    expect(urls()).toEqual([`${MANIFEST}#representation=p0-a0-r0`, `${MANIFEST}#representation=p0-a0-r1`]);
    expect(urls()).toEqual(urls());
  });

  test('a live (dynamic) manifest is still listed, without a duration', () => {
    const text = mpd(
      `<Period start="PT0S"><AdaptationSet mimeType="video/mp4"><SegmentTemplate media="$Number$.m4s" duration="2" startNumber="100"/><Representation id="live" codecs="avc1.4d401e" bandwidth="1500000" width="1280" height="720"/></AdaptationSet></Period>`,
      'type="dynamic" availabilityStartTime="2024-01-01T00:00:00Z" minimumUpdatePeriod="PT2S"',
    );
    const [item] = parseMpd(text, MPD_URL);
    expect(item.duration).toBeUndefined();
    expect(item.sources[0]).toMatchObject({ url: `${MANIFEST}#representation=live`, stream_profile: 'dash' });
  });
});

describe('DASH structure', () => {
  test('BaseURL is joined from the representation up through adaptation set, period and MPD', () => {
    const text = mpd(`
      <BaseURL>https://media.example.org/root/</BaseURL>
      <Period><BaseURL>p1/</BaseURL>
        <AdaptationSet mimeType="video/mp4"><BaseURL>video/</BaseURL>
          <Representation id="joined" codecs="avc1.4d401e" bandwidth="1"><BaseURL>720.mp4</BaseURL></Representation>
          <Representation id="parent" codecs="avc1.4d401e" bandwidth="2"><BaseURL>../alt/720.mp4</BaseURL></Representation>
          <Representation id="absolute" codecs="avc1.4d401e" bandwidth="3"><BaseURL>https://other.example.net/v.mp4</BaseURL></Representation>
        </AdaptationSet>
      </Period>`);
    expect(parseMpd(text, MPD_URL)[0].sources.map((s) => s.url)).toEqual([
      'https://media.example.org/root/p1/video/720.mp4',
      'https://media.example.org/root/p1/alt/720.mp4',
      'https://other.example.net/v.mp4',
    ]);
  });

  test('without an MPD BaseURL, relative BaseURLs resolve against the manifest URL', () => {
    const text = mpd(
      `<Period><AdaptationSet mimeType="audio/mp4"><BaseURL>../audio/</BaseURL><Representation id="a" codecs="opus" bandwidth="1"><BaseURL>en.webm?x=1&amp;y=2</BaseURL></Representation></AdaptationSet></Period>`,
    );
    expect(parseMpd(text, MPD_URL)[0].sources[0].url).toBe('https://cdn.example.com/vod/audio/en.webm?x=1&y=2');
  });

  test('Representation attributes override AdaptationSet ones', () => {
    const text = mpd(`
      <Period><AdaptationSet mimeType="video/mp4" codecs="avc1.4d401e" width="640" height="360" frameRate="25" lang="en">
        <Representation id="hi" mimeType="video/webm" codecs="vp09.00.40.08" width="1920" height="1080" frameRate="50" lang="fr" bandwidth="4000000"><BaseURL>hi.webm</BaseURL></Representation>
        <Representation id="lo" bandwidth="600000"><BaseURL>lo.mp4</BaseURL></Representation>
      </AdaptationSet></Period>`);
    const [hi, lo] = parseMpd(text, MPD_URL)[0].sources;
    expect(hi).toMatchObject({
      mime_type: 'video/webm',
      ext: 'webm',
      codecs: 'vp09.00.40.08',
      width: 1920,
      height: 1080,
      fps: 50,
      language: 'fr',
    });
    expect(lo).toMatchObject({
      mime_type: 'video/mp4',
      ext: 'mp4',
      codecs: 'avc1.4d401e',
      width: 640,
      height: 360,
      fps: 25,
      language: 'en',
    });
  });

  test('the content type comes from codecs when the MIME type is the generic application/mp4', () => {
    const text = mpd(
      `<Period><AdaptationSet mimeType="application/mp4"><Representation id="a" codecs="mp4a.40.2" bandwidth="1"><BaseURL>a.mp4</BaseURL></Representation><Representation id="t" codecs="stpp" bandwidth="1"><BaseURL>t.mp4</BaseURL></Representation></AdaptationSet></Period>`,
    );
    const [item] = parseMpd(text, MPD_URL);
    expect(item.type).toBe('audio');
    expect(item.sources.map((s) => [s.url.split('/').pop(), s.stream_profile])).toEqual([['a.mp4', 'audio_only']]);
  });

  test('subtitle and thumbnail adaptation sets, and trick-mode video, are left out', () => {
    const text = mpd(`
      <Period>
        <AdaptationSet contentType="text" mimeType="text/vtt" lang="en"><Representation id="sub" bandwidth="1"><BaseURL>en.vtt</BaseURL></Representation></AdaptationSet>
        <AdaptationSet contentType="image" mimeType="image/jpeg"><SegmentTemplate media="thumb-$Number$.jpg" duration="10"/><Representation id="thumbs" bandwidth="1" width="320" height="180"/></AdaptationSet>
        <AdaptationSet mimeType="video/mp4" codecs="avc1.4d401e"><EssentialProperty schemeIdUri="http://dashif.org/guidelines/trickmode" value="1"/><SegmentTemplate media="tm-$Number$.m4s" duration="10"/><Representation id="trick" bandwidth="1"/></AdaptationSet>
        <AdaptationSet mimeType="video/mp4" codecs="avc1.4d401e"><SegmentTemplate media="v-$Number$.m4s" duration="10"/><Representation id="main" bandwidth="1" width="640" height="360"/></AdaptationSet>
      </Period>`);
    expect(parseMpd(text, MPD_URL)[0].sources.map((s) => s.url)).toEqual([`${MANIFEST}#representation=main`]);
  });

  test('a representation id repeated in a later period is kept once, and the duration is the sum of the periods', () => {
    const period = (id: string, dur: string) =>
      `<Period id="${id}" duration="${dur}"><AdaptationSet mimeType="video/mp4" codecs="avc1.4d401e"><SegmentTemplate media="${id}/$RepresentationID$/$Number$.m4s" duration="2"/><Representation id="v1" bandwidth="1"/><Representation id="v-${id}" bandwidth="1"/></AdaptationSet></Period>`;
    const text = mpd(period('ad', 'PT15S') + period('main', 'PT10M'), 'type="static"');
    const [item] = parseMpd(text, MPD_URL);
    expect(item.sources.map((s) => s.url.split('#')[1])).toEqual([
      'representation=v1',
      'representation=v-ad',
      'representation=v-main',
    ]);
    expect(item.duration).toBe(615);
  });

  test('a dependent representation (dependencyId: an LCEVC or SVC enhancement layer) is left out, its base kept', () => {
    const text =
      mpd(`<Period><AdaptationSet mimeType="video/mp4" contentType="video"><SegmentTemplate media="$RepresentationID$/$Number$.m4s" duration="2"/>
      <Representation id="base" codecs="avc1.64001f" bandwidth="2500000" width="1920" height="1080"/></AdaptationSet>
      <AdaptationSet mimeType="video/mp4" contentType="video" codecs="lvc1"><SegmentTemplate media="$RepresentationID$/$Number$.m4s" duration="2"/>
      <Representation id="enh" dependencyId="base" bandwidth="4400000" width="1920" height="1080"/></AdaptationSet></Period>`);
    expect(parseMpd(text, MPD_URL)[0].sources.map((s) => s.url.split('#')[1])).toEqual(['representation=base']);
  });

  test("an id an audio and a video representation share (yt-dlp's float_duration.mpd) keeps both, each URL naming its kind", () => {
    const text = fs.readFileSync(new URL('corpus/dash/ytdlp-float-duration.mpd', import.meta.url), 'utf8');
    const [item] = parseMpd(text, MPD_URL);
    const fragments = item.sources.map((s) => s.url.split('#')[1]);
    expect(fragments).toHaveLength(7);
    expect(new Set(fragments).size).toBe(7);
    expect(item.sources.slice(0, 2).map((s) => [s.url.split('#')[1], s.has_video, s.has_audio])).toEqual([
      ['representation=318597&type=audio', false, true],
      ['representation=318597&type=video', true, false],
    ]);
    // Ids no other kind uses keep the plain form.
    expect(fragments[2]).toBe('representation=638590');
  });

  test.each([
    ['PT2.0S', 2],
    ['PT1H', 3600],
    ['P1DT0H0M1S', 86401],
    ['PT0.5S', 0.5],
  ])('mediaPresentationDuration %s is %d seconds', (iso, seconds) => {
    const text = mpd(
      `<Period><AdaptationSet mimeType="audio/mp4"><Representation id="a" codecs="mp4a.40.2" bandwidth="1"><BaseURL>a.m4a</BaseURL></Representation></AdaptationSet></Period>`,
      `mediaPresentationDuration="${iso}"`,
    );
    expect(parseMpd(text, MPD_URL)[0].duration).toBe(seconds);
  });

  test('headers given with the manifest are copied onto every source', () => {
    const sources = parseMpd(ONE_FILE_PAIR, MPD_URL, { headers: { Referer: 'https://www.example.com/' } })[0].sources;
    expect(sources).toHaveLength(3);
    for (const s of sources) expect(s.headers).toEqual({ Referer: 'https://www.example.com/' });
  });
});

describe('DASH DRM and errors', () => {
  const PROTECTED = `<ContentProtection schemeIdUri="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"><cenc:pssh xmlns:cenc="urn:mpeg:cenc:2013">AAAA</cenc:pssh></ContentProtection>`;

  test('ContentProtection on an adaptation set or a representation leaves it out', () => {
    const text = mpd(`
      <Period>
        <AdaptationSet mimeType="video/mp4" codecs="avc1.4d401e">${PROTECTED}<Representation id="drm-set" bandwidth="1"><BaseURL>a.mp4</BaseURL></Representation></AdaptationSet>
        <AdaptationSet mimeType="video/mp4" codecs="avc1.4d401e">
          <Representation id="drm-rep" bandwidth="1">${PROTECTED}<BaseURL>b.mp4</BaseURL></Representation>
          <Representation id="clear" bandwidth="1"><BaseURL>c.mp4</BaseURL></Representation>
        </AdaptationSet>
      </Period>`);
    expect(parseMpd(text, MPD_URL)[0].sources.map((s) => s.url)).toEqual(['https://cdn.example.com/vod/show/c.mp4']);
  });

  test('a manifest where everything is protected has nothing to download', () => {
    const text = mpd(
      `<Period><AdaptationSet mimeType="video/mp4" codecs="avc1.4d401e">${PROTECTED}<SegmentTemplate media="$Number$.m4s" duration="2"/><Representation id="v" bandwidth="1"/></AdaptationSet></Period>`,
    );
    let error: unknown;
    try {
      parseMpd(text, MPD_URL);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ReelayError);
    expect((error as ReelayError).code).toBe('no_media_found');
    expect((error as ReelayError).message).toMatch(/DRM/);
  });

  test('a manifest without audio or video has nothing to download', () => {
    const text = mpd(
      `<Period><AdaptationSet contentType="text" mimeType="text/vtt"><Representation id="s" bandwidth="1"><BaseURL>s.vtt</BaseURL></Representation></AdaptationSet></Period>`,
    );
    expect(() => parseMpd(text, MPD_URL)).toThrow(expect.objectContaining({ code: 'no_media_found' }));
  });

  test('malformed XML is an upstream error', () => {
    expect(() => parseMpd('<MPD><Period></MPD>', MPD_URL)).toThrow(expect.objectContaining({ code: 'upstream_error' }));
  });

  test('XML whose root is not MPD is an upstream error', () => {
    expect(() => parseMpd('<?xml version="1.0"?><rss><channel/></rss>', MPD_URL)).toThrow(
      expect.objectContaining({ code: 'upstream_error' }),
    );
  });
});

describe('DASH through the registry', () => {
  let origin: Origin;
  const egress = new Egress({ allowlist: ['127.0.0.1'] });
  const registry = createRegistry();
  const extract = (p: string) => registry.extract(new URL(origin.url(p)), { egress, endpoints: {} });
  const SINGLE_FILES = mpd(
    `<Period><AdaptationSet mimeType="video/mp4"><Representation id="v" codecs="avc1.64001e" bandwidth="300000" width="640" height="360"><BaseURL>../video-only.mp4</BaseURL><SegmentBase indexRange="0-1000"/></Representation></AdaptationSet>` +
      `<AdaptationSet mimeType="audio/mp4"><Representation id="a" codecs="mp4a.40.2" bandwidth="96000"><BaseURL>../audio-only.m4a</BaseURL></Representation></AdaptationSet></Period>`,
    'type="static" mediaPresentationDuration="PT2S"',
  );

  beforeAll(async () => {
    origin = await startOrigin();
    const media = await testMedia();
    for (const name of fs.readdirSync(media.dashDir)) {
      const type = name.endsWith('.mpd') ? 'application/dash+xml' : 'video/iso.segment';
      origin.file(`/media/dash/${name}`, path.join(media.dashDir, name), type);
    }
    origin.file('/media/video-only.mp4', media.videoOnlyMp4, 'video/mp4');
    origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
    origin.body('/media/single/manifest.mpd', SINGLE_FILES, 'application/dash+xml');
    origin.file('/stream', path.join(media.dashDir, 'manifest.mpd'), 'application/octet-stream');
    origin.body('/broken.mpd', '<MPD><Period><AdaptationSet></MPD>', 'application/dash+xml');
    origin.body('/error-page.mpd', '<!doctype html><html><body><MPD >?</body></html>', 'text/html');
  });
  afterAll(async () => {
    await origin.close();
  });

  test('the ffmpeg-made DASH manifest becomes a segmented video and audio pair', async () => {
    const { result, records } = await extract('/media/dash/manifest.mpd');
    expect(result).toMatchObject({
      platform: 'generic',
      extract_profile: 'dash_manifest',
      content_type: 'video',
      url: origin.url('/media/dash/manifest.mpd'),
    });
    expect(result.media).toHaveLength(1);
    expect(result.media[0].duration).toBe(2);
    const [video, audio] = result.media[0].sources;
    expect(video).toMatchObject({
      quality: '240p',
      url: origin.url('/media/dash/manifest.mpd#representation=0'),
      stream_profile: 'dash',
      width: 320,
      height: 240,
      fps: 25,
      has_video: true,
      has_audio: false,
      codecs: 'avc1.42c00d',
      ext: 'mp4',
    });
    expect(audio).toMatchObject({
      url: origin.url('/media/dash/manifest.mpd#representation=1'),
      stream_profile: 'dash',
      has_video: false,
      has_audio: true,
      codecs: 'mp4a.40.2',
      ext: 'm4a',
    });
    expect(audio.quality).toMatch(/^\d+k$/);
    expect(audio.language).toBeUndefined(); // ffmpeg writes lang="und"
    expect(records.map((r) => r.stream_profile)).toEqual(['dash', 'dash']);
  });

  test('a manifest of single files yields progressive sources that download directly', async () => {
    const { result } = await extract('/media/single/manifest.mpd');
    expect(result.media[0].sources).toEqual([
      expect.objectContaining({
        quality: '360p',
        url: origin.url('/media/video-only.mp4'),
        stream_profile: 'video_only',
        has_video: true,
        has_audio: false,
      }),
      expect.objectContaining({
        quality: '96k',
        url: origin.url('/media/audio-only.m4a'),
        stream_profile: 'audio_only',
        has_video: false,
        has_audio: true,
      }),
    ]);
  });

  test('a manifest served as octet-stream without an extension is recognised by its <MPD head', async () => {
    const { result } = await extract('/stream');
    expect(result.extract_profile).toBe('dash_manifest');
    expect(result.media[0].sources[0].url).toBe(origin.url('/stream#representation=0'));
  });

  test('a broken manifest is an upstream error', async () => {
    await expect(extract('/broken.mpd')).rejects.toMatchObject({ code: 'upstream_error' });
  });

  test('an HTML page at a .mpd URL is not taken for a manifest', async () => {
    const doc = await fetchDocument(egress, new URL(origin.url('/error-page.mpd')));
    try {
      expect(dashManifest.detect(doc)).toBe(false);
    } finally {
      doc.close();
    }
  });
});
