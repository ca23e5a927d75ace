// An HLS playlist read whole, as the extract reads one (hls-parser builds its variants, renditions
// and segments), after the checks it must pass on its text: its size, not a master and a media
// playlist at once, at most MAX_SEGMENTS URI lines. Counted on the text, never by building the
// list: a 2 MB playlist of a million one-letter URI lines would cost hls-parser hundreds of MB of
// segment objects.
import { ReelayError } from '@reelay/contracts';
import HLS from 'hls-parser';
import type { MasterPlaylist, MediaPlaylist } from 'hls-parser/types.js';
import { countUriLines, resolvePlaylistUri, sameResource } from './hls-text.js';
import { checkSize, DEFAULT_MAX_SEGMENTS, tooManySegments } from './limits.js';
import { looksLikeHls } from './sniff.js';

export type { Key, MasterPlaylist, MediaPlaylist, Rendition, Segment, Variant } from 'hls-parser/types.js';

// Strict mode rejects what players and yt-dlp accept (a missing or too low EXT-X-VERSION, an
// EXTINF longer than the target duration, duplicate rendition names), so the lenient mode is set
// once, at load; silent keeps its complaints off stderr. What matters to a reader (a variant or a
// segment to list) is checked on the result instead.
HLS.setOptions({ strictMode: false, silent: true });

/**
 * The checks an HLS text must pass before hls-parser sees it: not a master and a media playlist at
 * once, and no more than `max` URI lines (segments, or a master's variants).
 */
export function checkHlsText(text: string, max: number): void {
  const master = /^[ \t]*#EXT-X-(?:I-FRAME-)?STREAM-INF:/m.test(text);
  if (master && /^[ \t]*#EXTINF:/m.test(text)) {
    throw new ReelayError(
      'upstream_error',
      'The HLS playlist is invalid: it is a master playlist and a media playlist at once (variants beside segments).',
    );
  }
  if (countUriLines(text, max) > max) {
    if (master) throw new ReelayError('upstream_error', `The HLS master playlist lists more than ${max} variants.`);
    throw tooManySegments('HLS playlist', max);
  }
}

/** A playlist read whole, once it has passed the checks; `maxSegments` is MAX_SEGMENTS. */
export function readHls(text: string, maxSegments = DEFAULT_MAX_SEGMENTS): MasterPlaylist | MediaPlaylist {
  if (!looksLikeHls(text))
    throw new ReelayError('upstream_error', 'The HLS playlist is invalid: it does not start with #EXTM3U.');
  checkSize(text, 'HLS playlist');
  checkHlsText(text, maxSegments);
  try {
    return HLS.parse(prepare(text));
  } catch (err) {
    throw new ReelayError(
      'upstream_error',
      `The HLS playlist is invalid and could not be read (${err instanceof Error ? err.message : String(err)}).`,
      { cause: err },
    );
  }
}

/** Works around two hls-parser quirks on playlists that are valid in practice. */
function prepare(text: string): string {
  return (
    text
      // Titles are decoded with decodeURIComponent(escape(title)), which throws URIError on any
      // character above U+00FF (e.g. a Japanese title); titles are not used here, so they go.
      .replace(/^(\s*#EXTINF:[^,\r\n]*),[^\r\n]*/gm, '$1,')
      // RESOLUTION=1280X720 is read by yt-dlp and players, but by hls-parser as a height of 0.
      .replace(/RESOLUTION=(\d+)X(\d+)/g, 'RESOLUTION=$1x$2')
  );
}

/**
 * One level of nesting: a master whose variant or rendition is the master itself (`selves`: the
 * URL it was read from, and the one first asked for when a redirect led there) would send a job
 * round in a circle. The extract never follows variants, so this is the one loop it can see.
 */
export function refuseSelfNaming(master: MasterPlaylist, selves: (URL | undefined)[]): void {
  const uris = master.variants.flatMap((v) => [
    v.uri,
    ...v.audio.map((r) => r.uri),
    ...v.video.map((r) => r.uri),
    ...v.subtitles.map((r) => r.uri),
  ]);
  const base = selves[0]!;
  for (const uri of uris) {
    const url = resolvePlaylistUri(uri, base);
    if (url && selves.some((self) => self && sameResource(url, self))) {
      throw new ReelayError(
        'upstream_error',
        'The HLS master playlist names itself as a variant, which would never end.',
      );
    }
  }
}
