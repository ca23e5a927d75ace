// What a document is, told from its first bytes: the proxy's test for a manifest to rewrite, and the
// extractors' for a playlist, an MPD or a feed served under any content type.
import { describe, expect, test } from '@jest/globals';
import { looksLikeFeed, looksLikeHls, looksLikeMpd, sniffManifest } from '../src/sniff.js';

describe('manifests', () => {
  test('are recognised by their first bytes, not their content type', () => {
    expect(sniffManifest(Buffer.from('\uFEFF#EXTM3U\n#EXT-X-VERSION:3\n'))).toBe('hls');
    expect(sniffManifest(Buffer.from('<?xml version="1.0"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011">'))).toBe(
      'dash',
    );
    expect(sniffManifest(Buffer.from([0x47, 0x40, 0x11, 0x10]))).toBeUndefined();
    expect(sniffManifest(Buffer.from('<html><body>#EXTM3U</body></html>'))).toBeUndefined();
  });

  test('a playlist, an MPD and a feed are told apart from an HTML page', () => {
    expect(looksLikeHls('\uFEFF  #EXTM3U\n')).toBe(true);
    expect(looksLikeMpd('<?xml version="1.0"?><mpd:MPD xmlns:mpd="urn:mpeg:dash:schema:mpd:2011">')).toBe(true);
    expect(looksLikeFeed('<?xml version="1.0"?><!-- a podcast --><rss version="2.0"><channel>')).toBe(true);
    expect(looksLikeFeed('<feed xmlns="http://www.w3.org/2005/Atom">')).toBe(true);
    for (const page of ['<!DOCTYPE html><html><body>#EXTM3U <MPD> <rss>', '<html><head><title>x</title>']) {
      expect(looksLikeHls(page)).toBe(false);
      expect(looksLikeFeed(page)).toBe(false);
    }
  });
});
