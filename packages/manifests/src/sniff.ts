// What a document is, told from its text (content types are too often wrong to rely on): an HLS
// playlist, a master, a DASH manifest, a feed. The extractors' detectors and the job proxy's
// rewriter ask here.
import type { ManifestKind } from '@reelay/contracts';

/** Bytes the proxy looks at before deciding whether a response is a manifest. */
export const MANIFEST_SNIFF_BYTES = 512;

export function looksLikeHls(text: string): boolean {
  // trimStart also drops a UTF-8 byte order mark (U+FEFF counts as white space).
  return text.trimStart().startsWith('#EXTM3U');
}

/** A master playlist (it lists variants): whether it is live takes reading one of them. */
export function isMaster(text: string): boolean {
  return /^\s*#EXT-X-STREAM-INF:/m.test(text);
}

export function looksLikeMpd(text: string): boolean {
  return /<(?:[\w.-]+:)?MPD[\s>/]/.test(text.slice(0, 2048));
}

/** Whether the first bytes of a document are a feed's root element (after the prolog). */
export function looksLikeFeed(text: string): boolean {
  return /^(?:\s|<\?xml[^>]*\?>|<!--[\s\S]*?-->|<\?xml-stylesheet[^>]*\?>|<!DOCTYPE[^>[]*>)*<(?:rss|feed|(?:[\w.-]+:)?RDF)[\s>]/.test(
    text.replace(/^\uFEFF/, '').slice(0, 4096),
  );
}

/** The kind of manifest a response's first bytes begin, as the job's proxy recognises one. */
export function sniffManifest(head: Buffer): ManifestKind | undefined {
  const text = head
    .subarray(0, MANIFEST_SNIFF_BYTES)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (text.startsWith('#EXTM3U')) return 'hls';
  if (text.startsWith('<') && /<(\w+:)?MPD[\s>]/.test(text)) return 'dash';
  return undefined;
}
