// HLS playlists as text (RFC 8216): their lines, a tag's attribute list, and a URI resolved against
// the playlist. The readers of playlists here take lines and attributes from this module: the
// recorder's (hls-live.ts), the proxy's plan (segment-plan.ts) and a job's checks (ledger.ts).

/** A playlist's lines, trimmed; blank ones are kept (a reader may look at the first line). */
export function playlistLines(text: string): string[] {
  return text.split(/\r?\n/).map((l) => l.trim());
}

/**
 * How many URI lines a playlist has (segments, or a master's variants), counted on the text without
 * splitting it: a 13 MB playlist of a million segments costs no array of lines. Stops past `upTo`.
 */
export function countUriLines(text: string, upTo = Infinity): number {
  let uris = 0;
  for (let start = 0; start < text.length && uris <= upTo;) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    let i = start;
    while (i < end && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9 || text.charCodeAt(i) === 13)) i++;
    if (i < end && text.charCodeAt(i) !== 35 /* # */) uris++;
    start = end + 1;
  }
  return uris;
}

/** A URI line: neither blank nor a tag or comment. */
export function isUriLine(line: string): boolean {
  return line !== '' && !line.startsWith('#');
}

/** The attribute list of a tag line (`#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS="a,b"`) by name, quotes removed. */
export function tagAttributes(line: string): Record<string, string> {
  const colon = line.indexOf(':');
  const attrs: Record<string, string> = {};
  if (colon === -1) return attrs;
  for (const m of line.slice(colon + 1).matchAll(/([A-Z0-9-]+)=("[^"]*"|[^,]*)/g))
    attrs[m[1]] = m[2].replace(/^"|"$/g, '');
  return attrs;
}

/** A playlist URI resolved against the playlist's URL; only http(s) can be fetched through egress. */
export function resolvePlaylistUri(uri: string | undefined, base: URL): URL | undefined {
  if (!uri) return undefined;
  // URL.canParse first: a malformed URI loses its own entry, not the whole playlist.
  if (!URL.canParse(uri, base.href)) return undefined;
  const url = new URL(uri, base);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}

/** A URL without its fragment, for comparing what a playlist names with where it came from. */
export function sameResource(a: URL, b: URL): boolean {
  return a.href.split('#')[0] === b.href.split('#')[0];
}
