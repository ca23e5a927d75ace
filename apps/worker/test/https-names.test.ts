import { describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { fromProxyUrl, rewriteManifest, toProxyUrl } from '../src/https-names.js';

describe('https origins reach ffmpeg under stand-in http names', () => {
  test.each([
    ['https://cdn.example.com/a/b.m3u8?sig=1', 'http://cdn.example.com.443.reelay-https.invalid/a/b.m3u8?sig=1'],
    ['https://cdn.example.com:8443/x.mpd', 'http://cdn.example.com.8443.reelay-https.invalid/x.mpd'],
    ['https://93.184.216.34/v.mp4', 'http://93.184.216.34.443.reelay-https.invalid/v.mp4'],
    ['https://[2001:db8::1]:8443/x', 'http://2001-db8--1.ipv6.8443.reelay-https.invalid/x'],
  ])('%s is given to ffmpeg as %s and maps back', (origin, standIn) => {
    expect(toProxyUrl(origin)).toBe(standIn);
    // ffmpeg names the port in the request line it sends to a proxy
    expect(fromProxyUrl(standIn.replace('.invalid/', '.invalid:80/')).href).toBe(origin);
  });

  test('http URLs are given as they are, without the fragment', () => {
    expect(toProxyUrl('http://127.0.0.1:9/dash/manifest.mpd#representation=1')).toBe(
      'http://127.0.0.1:9/dash/manifest.mpd',
    );
    expect(fromProxyUrl('http://127.0.0.1:9/seg.ts').href).toBe('http://127.0.0.1:9/seg.ts');
  });

  test('a relative reference in a playlist stays on https', () => {
    const segment = new URL('../seg/1.ts', toProxyUrl('https://cdn.example.com/a/b/index.m3u8'));
    expect(fromProxyUrl(segment.href).href).toBe('https://cdn.example.com/a/seg/1.ts');
  });

  test.each(['file:///etc/passwd', 'ftp://example.com/x', 'data:text/plain,x'])('%s is url_blocked', (url) => {
    expect(() => toProxyUrl(url)).toThrow(ReelayError);
    expect(() => fromProxyUrl(url)).toThrow(expect.objectContaining({ code: 'url_blocked' }));
  });

  test('ffmpeg asking the proxy for https directly is refused: https only travels as a stand-in', () => {
    expect(() => fromProxyUrl('https://cdn.example.com/a.m3u8')).toThrow(
      expect.objectContaining({ code: 'url_blocked' }),
    );
  });

  test('a request target that is not an absolute URL, or a broken stand-in, is not a proxy request', () => {
    expect(() => fromProxyUrl('/index.m3u8')).toThrow(TypeError);
    expect(() => fromProxyUrl('http://x.reelay-https.invalid/')).toThrow(TypeError);
  });
});

describe('manifests', () => {
  test('an HLS playlist gets its https references rewritten and nothing else', () => {
    const playlist = [
      '#EXTM3U',
      '#EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.com/k?id=1",IV=0x1',
      '#EXT-X-MAP:URI="init.mp4"',
      '#EXTINF:4.0,',
      'https://cdn.example.com:8443/seg/0.ts?token=a&b=c',
      '#EXTINF:4.0,',
      'seg/1.ts',
      '#EXTINF:4.0,',
      'http://plain.example.com/seg/2.ts',
      '#EXTINF:4.0,',
      '//other.example.com/seg/3.ts',
    ].join('\n');
    expect(rewriteManifest(playlist, new URL('https://site.example.com/index.m3u8')).split('\n')).toEqual([
      '#EXTM3U',
      '#EXT-X-KEY:METHOD=AES-128,URI="http://keys.example.com.443.reelay-https.invalid/k?id=1",IV=0x1',
      '#EXT-X-MAP:URI="init.mp4"',
      '#EXTINF:4.0,',
      'http://cdn.example.com.8443.reelay-https.invalid/seg/0.ts?token=a&b=c',
      '#EXTINF:4.0,',
      'seg/1.ts',
      '#EXTINF:4.0,',
      'http://plain.example.com/seg/2.ts',
      '#EXTINF:4.0,',
      'http://other.example.com.443.reelay-https.invalid/seg/3.ts',
    ]);
  });

  test('a scheme-relative reference in a manifest fetched over http stays http', () => {
    expect(rewriteManifest('#EXTM3U\n//other.example.com/a.ts\n', new URL('http://site.example.com/i.m3u8'))).toBe(
      '#EXTM3U\n//other.example.com/a.ts\n',
    );
  });

  test('a DASH manifest gets its BaseURLs rewritten and its templates left alone', () => {
    const mpd =
      '<MPD><BaseURL>https://cdn.example.com/v/</BaseURL><SegmentTemplate media="chunk-$RepresentationID$-$Number%05d$.m4s" initialization="https://cdn.example.com/init-$RepresentationID$.m4s"/></MPD>';
    expect(rewriteManifest(mpd, new URL('https://site.example.com/m.mpd'))).toBe(
      '<MPD><BaseURL>http://cdn.example.com.443.reelay-https.invalid/v/</BaseURL><SegmentTemplate media="chunk-$RepresentationID$-$Number%05d$.m4s" initialization="http://cdn.example.com.443.reelay-https.invalid/init-$RepresentationID$.m4s"/></MPD>',
    );
  });
});
