// Media types for the extractors: extension ↔ MIME type and which MIME types are video, audio or an
// image. Built on mime-types (mime-db); OVERRIDES lists only where reelay's answer differs, and why.
import { extension as dbExtension, lookup as dbLookup } from 'mime-types';
import type { MediaType } from '@reelay/contracts';

/** Content types of an HTML page (what a page extractor reads, and what a manifest URL must not be). */
export const HTML_TYPES: ReadonlySet<string> = new Set(['text/html', 'application/xhtml+xml']);
/** Content types of an HLS playlist (RFC 8216 §4 and the legacy names origins still send). */
export const HLS_TYPES: ReadonlySet<string> = new Set([
  'application/vnd.apple.mpegurl',
  'application/x-mpegurl',
  'audio/mpegurl',
  'audio/x-mpegurl',
]);
/** Content type of a DASH manifest (ISO/IEC 23009-1 Annex C). */
export const DASH_TYPES: ReadonlySet<string> = new Set(['application/dash+xml']);

// Extension → MIME type where mime-db's first choice is not what players and origins send.
const TYPE_OF_EXT: Record<string, string> = {
  m4v: 'video/mp4', // an MP4 by another name; mime-db says video/x-m4v, which no origin sends
  flac: 'audio/flac', // registered with IANA (RFC 9639); mime-db still says audio/x-flac
  // opus stays mime-db's audio/ogg: a .opus file is Opus in Ogg (RFC 7845 §9); audio/opus (RFC 7587)
  // names the RTP payload, not a file.
};

// MIME type → extension where mime-db's first listed extension is not the usual file name.
const EXT_OF_TYPE: Record<string, string> = {
  'video/quicktime': 'mov', // mime-db: qt
  'video/mpeg': 'mpg', // mime-db: mpeg
  'audio/mpeg': 'mp3', // mime-db: mpga
  'audio/mp3': 'mp3', // not in mime-db; some origins send it
  'audio/x-m4a': 'm4a',
  'audio/aac': 'aac', // mime-db: adts
  'audio/ogg': 'ogg', // mime-db: oga
  'audio/opus': 'opus', // a misnamed Ogg Opus file (see above)
  'audio/flac': 'flac',
  'audio/x-wav': 'wav',
  'audio/webm': 'webm', // mime-db: weba; yt-dlp and DASH name WebM audio .webm
  'image/jpeg': 'jpg', // mime-db: jpeg
  'application/ogg': 'ogg', // mime-db: ogx
};

// The extensions a URL may end in to be taken as a media file. mime-db files far more under video/,
// audio/ and image/ (playlists such as .asx and .ram, DASH segments .m4s, .ico, .psd, .mid…), which
// are not files a user downloads as media: mime-db gives the type string, this list decides media.
const MEDIA_EXTS: ReadonlySet<string> = new Set([
  'mp4',
  'm4v',
  'mov',
  'webm',
  'mkv',
  'ogv',
  'flv',
  'ts',
  '3gp',
  'avi',
  'wmv',
  'mpg',
  'mpeg',
  'mp3',
  'm4a',
  'aac',
  'ogg',
  'oga',
  'opus',
  'wav',
  'flac',
  'weba',
  'mka',
  'wma',
  'jpg',
  'jpeg',
  'png',
  'gif',
  'webp',
  'avif',
  'heic',
  'bmp',
]);

/** Whether a MIME type is video, audio or an image (SVG is a document that can script, not media). */
export function kindOfMime(mime: string | undefined): MediaType | undefined {
  if (!mime) return undefined;
  if (mime.startsWith('video/')) return 'video';
  if (mime.startsWith('audio/')) return 'audio';
  if (mime.startsWith('image/')) return mime === 'image/svg+xml' ? undefined : 'image';
  if (mime === 'application/ogg') return 'audio';
  if (mime === 'application/mp4') return 'video';
  return undefined;
}

/**
 * The MIME type of a media file extension ('jpg' → 'image/jpeg'), or undefined when the extension is
 * not video, audio or an image. `as: 'audio'` asks for the audio flavour of a container that holds
 * either ('mp4' → 'audio/mp4', 'webm' → 'audio/webm').
 */
export function mimeOfExt(ext: string, as?: 'audio'): string | undefined {
  const key = ext.replace(/^\./, '').toLowerCase();
  if (!MEDIA_EXTS.has(key)) return undefined;
  const mime = TYPE_OF_EXT[key] ?? (dbLookup(key) || undefined);
  if (!kindOfMime(mime)) return undefined;
  if (as === 'audio' && mime!.startsWith('video/')) return `audio/${mime!.slice('video/'.length)}`;
  return mime;
}

/** The usual extension of a video, audio or image MIME type ('audio/mp4' → 'm4a'), or undefined. */
export function extOfMime(mime: string | undefined): string | undefined {
  const type = mime?.split(';')[0].trim().toLowerCase();
  if (!type || !kindOfMime(type)) return undefined;
  return EXT_OF_TYPE[type] ?? (dbExtension(type) || undefined);
}
