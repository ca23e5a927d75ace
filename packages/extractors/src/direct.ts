// Direct media files: a URL that answers with video, audio or an image itself. Recognised from
// Content-Type, the URL's extension, or the first bytes (for origins that send octet-stream).
import { parse as parseDisposition } from 'content-disposition';
import type { MediaType } from '@reelay/contracts';
import { urlExtension, type FetchedDocument } from './document.js';
import { kindOfMime, mimeOfExt } from './media-types.js';
import type { DocumentExtractor, ResultDraft, SourceDraft } from './types.js';

const GENERIC_TYPES = new Set([
  '',
  'application/octet-stream',
  'binary/octet-stream',
  'application/binary',
  'application/force-download',
  'application/x-download',
]);

function classify(doc: FetchedDocument): { kind: MediaType; mime?: string; ext?: string } | undefined {
  const byType = kindOfMime(doc.contentType);
  if (byType)
    return { kind: byType, mime: doc.contentType, ext: doc.sniffed?.ext ?? (urlExtension(doc.finalUrl) || undefined) };
  if (!GENERIC_TYPES.has(doc.contentType)) return undefined;
  if (doc.sniffed) {
    const kind = kindOfMime(doc.sniffed.mime);
    if (kind) return { kind, mime: doc.sniffed.mime, ext: doc.sniffed.ext };
  }
  const ext = urlExtension(doc.finalUrl);
  const kind = kindOfMime(mimeOfExt(ext));
  return kind ? { kind, ext } : undefined;
}

/** The origin's file name: RFC 6266 parsing (filename* preferred) by the content-disposition package. */
function filenameOf(doc: FetchedDocument): string | undefined {
  const header = doc.headers['content-disposition'];
  if (!header) return undefined;
  try {
    return parseDisposition(String(header)).parameters.filename?.trim() || undefined;
  } catch {
    return undefined; // a malformed header names no file; the title falls back to the URL
  }
}

export const directFile: DocumentExtractor = {
  name: 'direct_file',
  detect: (doc) => classify(doc) !== undefined,
  async extract(doc): Promise<ResultDraft> {
    const { kind, mime, ext } = classify(doc)!;
    const source: SourceDraft = {
      url: doc.url.href,
      stream_profile: kind === 'video' ? 'muxed_progressive' : kind === 'audio' ? 'audio_only' : 'image',
      quality: 'original',
      mime_type: mime,
      ext,
      size: doc.size,
    };
    if (kind === 'audio') Object.assign(source, { has_audio: true, has_video: false });
    const filename = filenameOf(doc);
    return {
      url: doc.url.href,
      platform: 'generic',
      extract_profile: 'direct_file',
      title: filename?.replace(/\.[a-z0-9]{1,5}$/i, ''),
      media: [{ type: kind, sources: [source] }],
    };
  },
};
