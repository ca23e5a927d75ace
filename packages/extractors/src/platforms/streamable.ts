// Streamable: a video's renditions through its public API (cobalt's route). Every entry of `files`
// (mp4, mp4-mobile, ...) is a muxed progressive MP4 with its size; there are no manifests. File URLs
// are signed and expire, and are written protocol-relative (//cdn...): they take the API's scheme,
// https in production.
//
// Endpoints (ctx.endpoints, env PLATFORM_STREAMABLE_<NAME>):
//   streamable_api  default https://api.streamable.com
// Download headers: none.
import { ReelayError } from '@reelay/contracts';
import type { ResultDraft, SourceDraft, UrlExtractor } from '../types.js';
import { absolute, endpoint, extOf, frameRate, getJson, num, obj, statusFailure, str } from './public-api.js';

const API = 'https://api.streamable.com';

/** A video page, its embed (/e/), its original-file (/o/) and its share (/s/{id}/...) forms. */
export const STREAMABLE_PATTERNS: readonly RegExp[] = [
  // The site's own pages share the path shape: they are left out by name.
  /^https?:\/\/(?:www\.)?streamable\.com\/(?:[eo]\/)?(?!(?:login|signup|upload|pricing|documentation|settings|privacy|terms|blog|about|help|clipper)\/?(?:[?#]|$))([a-z0-9]{2,16})\/?(?:[?#].*)?$/i,
  /^https?:\/\/(?:www\.)?streamable\.com\/s\/([a-z0-9]{2,16})(?:\/[^?#]*)?(?:[?#].*)?$/i,
];

/** URL shapes and the video id each names (null: not a Streamable video). The tests check every line. */
export const STREAMABLE_URL_CASES: readonly (readonly [string, string | null])[] = [
  ['https://streamable.com/dnd1', 'dnd1'],
  ['https://streamable.com/moo?src=player-page-share', 'moo'],
  ['https://www.streamable.com/e/a1b2c3/', 'a1b2c3'],
  ['https://streamable.com/o/a1b2c3', 'a1b2c3'],
  ['https://streamable.com/s/a1b2c3/xyzzy', 'a1b2c3'],
  // Codes are case-sensitive: kept as written.
  ['https://streamable.com/Ab1CdE', 'Ab1CdE'],
  ['https://streamable.com/e/Ab1CdE?autoplay=1', 'Ab1CdE'],
  ['https://streamable.com/s/okkqk/drxjds', 'okkqk'],
  ['https://STREAMABLE.com/Ab1CdE#t=3', 'Ab1CdE'],
  ['https://streamable.com/', null],
  ['https://streamable.com/a1b2c3/extra', null],
  ['https://streamable.com/e/', null],
  ['https://streamable.com/login', null],
  ['https://streamable.com/documentation', null],
  ['https://notstreamable.com/a1b2c3', null],
  ['https://streamable.com.example/a1b2c3', null],
];

export function streamableId(url: URL): string | undefined {
  for (const pattern of STREAMABLE_PATTERNS) {
    const m = pattern.exec(url.href);
    if (m) return m[1]; // ids are case-sensitive (streamable.com/Ab12c is not /ab12c)
  }
  return undefined;
}

const STATUS_MESSAGE: Record<number, string> = {
  0: 'is still being uploaded',
  1: 'is still processing',
  3: 'failed to process',
};

export const streamable: UrlExtractor = {
  name: 'streamable',
  platform: 'streamable',
  patterns: STREAMABLE_PATTERNS,
  kinds: ['video'],
  matches: (url) => streamableId(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const id = streamableId(url);
    if (!id) throw new ReelayError('invalid_url', 'This is not a Streamable video URL.');
    const api = endpoint(ctx, 'streamable_api', API);
    const answer = await getJson(ctx, `${api}/videos/${id}`);
    const video = obj(answer.json);
    if (answer.status !== 200)
      throw statusFailure('Streamable', answer.status, str(video?.message) ?? str(video?.error));
    if (!video) throw new ReelayError('upstream_error', 'Streamable answered with something other than JSON.');
    const status = num(video.status);
    if (status !== 2) {
      throw new ReelayError(
        'content_not_found',
        `The Streamable video ${STATUS_MESSAGE[status ?? -1] ?? 'is not ready'}; there is nothing to download yet.`,
      );
    }

    const sources: SourceDraft[] = [];
    for (const [name, entry] of Object.entries(obj(video.files) ?? {})) {
      const file = obj(entry);
      const fileUrl = absolute(file?.url, api);
      // A rendition still being made has a status of its own.
      if (!file || !fileUrl || (file.status !== undefined && file.status !== 2)) continue;
      const ext = extOf(fileUrl) || (name.startsWith('mp4') ? 'mp4' : undefined);
      sources.push({
        url: fileUrl,
        stream_profile: 'muxed_progressive',
        mime_type: ext === 'webm' ? 'video/webm' : 'video/mp4',
        ext,
        width: num(file.width),
        height: num(file.height),
        size: num(file.size),
        bitrate: num(file.bitrate),
        fps: frameRate(file.framerate),
      });
    }
    if (sources.length === 0) throw new ReelayError('no_media_found', 'Streamable lists no files for this video.');
    const firstFile = obj(Object.values(obj(video.files) ?? {})[0]);
    return {
      url: url.href,
      platform: 'streamable',
      extract_profile: 'streamable_api',
      title: str(video.title),
      media: [
        {
          type: 'video',
          sources,
          thumbnail: absolute(video.thumbnail_url, api),
          duration: num(video.duration) ?? num(firstFile?.duration),
        },
      ],
    };
  },
};
