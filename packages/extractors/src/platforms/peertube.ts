// PeerTube: a video through GET /api/v1/videos/{id} of the instance in the URL. Web Video files
// (files[]) and the HLS playlist's fragmented MP4s (streamingPlaylists[].files[]) are progressive
// sources, one per resolution; resolution 0 is audio only, and newer versions store HLS video
// without sound beside such an audio file (a merge pair). The HLS master's variants are listed too.
// A live has no files, only its HLS playlist. For a federated video the instance still answers, with
// the origin's file URLs.
//
// Any host can be an instance, so matches() looks only at the path and the id's shape (a UUID or a
// 22-character short UUID); a host whose API does not answer like PeerTube is declined with
// NotMyUrl and the registry goes on to the generic extractors.
//
// Endpoints: none. The instance is the URL's own origin.
// Download headers: none. (A password-protected video would need x-peertube-video-password, which
// an extract request cannot carry, so such videos are reported as not found.)
import { ReelayError } from '@reelay/contracts';
import { NotMyUrl } from '../registry.js';
import { statePosition } from '../collection.js';
import type { EntryDraft, ExtractContext, ResultDraft, SourceDraft, UrlExtractor } from '../types.js';
import { absolute, arr, extOf, getJson, manifestSources, num, obj, rateLimited, str, type Json } from './public-api.js';

const HOST = String.raw`https?:\/\/[^/?#@]+`;
const END = String.raw`\/?(?:[?#].*)?$`;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** short-uuid's flickrBase58 alphabet (no 0, O, I or l), padded to 22 characters. */
const SHORT_UUID = '[1-9A-HJ-NP-Za-km-z]{22}';
const ID = `(${UUID}|${SHORT_UUID})`;

export const PEERTUBE_PATTERNS: readonly RegExp[] = [
  new RegExp(`^${HOST}\\/w\\/${ID}${END}`),
  new RegExp(`^${HOST}\\/videos\\/(?:watch|embed)\\/${ID}${END}`),
  new RegExp(`^${HOST}\\/api\\/v1\\/videos\\/${ID}${END}`),
];

/** URL shapes and the API request each leads to (null: not a PeerTube video URL). The tests check every line. */
export const PEERTUBE_URL_CASES: readonly (readonly [string, string | null])[] = [
  [
    'https://framatube.org/w/9c9de5e8-0a1e-484a-b099-e80766180a6d',
    'https://framatube.org/api/v1/videos/9c9de5e8-0a1e-484a-b099-e80766180a6d',
  ],
  [
    'https://peertube.example/w/kkGMgK9ZtnKfYAgnEtQxbv?start=1m30s',
    'https://peertube.example/api/v1/videos/kkGMgK9ZtnKfYAgnEtQxbv',
  ],
  [
    'https://peertube.example/videos/watch/9c9de5e8-0a1e-484a-b099-e80766180a6d',
    'https://peertube.example/api/v1/videos/9c9de5e8-0a1e-484a-b099-e80766180a6d',
  ],
  [
    'https://peertube.example/videos/embed/kkGMgK9ZtnKfYAgnEtQxbv?autoplay=1',
    'https://peertube.example/api/v1/videos/kkGMgK9ZtnKfYAgnEtQxbv',
  ],
  [
    'https://peertube.example/api/v1/videos/9c9de5e8-0a1e-484a-b099-e80766180a6d',
    'https://peertube.example/api/v1/videos/9c9de5e8-0a1e-484a-b099-e80766180a6d',
  ],
  ['http://127.0.0.1:9000/w/kkGMgK9ZtnKfYAgnEtQxbv', 'http://127.0.0.1:9000/api/v1/videos/kkGMgK9ZtnKfYAgnEtQxbv'],
  [
    'https://peertube.example/videos/watch/kkGMgK9ZtnKfYAgnEtQxbv#t=30',
    'https://peertube.example/api/v1/videos/kkGMgK9ZtnKfYAgnEtQxbv',
  ],
  [
    'https://peertube.example/videos/embed/9c9de5e8-0a1e-484a-b099-e80766180a6d?start=10&title=0&warningTitle=0',
    'https://peertube.example/api/v1/videos/9c9de5e8-0a1e-484a-b099-e80766180a6d',
  ],
  ['https://peertube.example/w/p/kkGMgK9ZtnKfYAgnEtQxbv', null],
  ['https://peertube.example/videos/watch/playlist/9c9de5e8-0a1e-484a-b099-e80766180a6d', null],
  ['https://peertube.example/c/some_channel/videos', null],
  ['https://peertube.example/a/someone', null],
  ['https://en.wikipedia.org/w/index.php', null],
  ['https://example.com/w/about', null],
  ['https://example.com/w/kkGMgK9ZtnKfYAgnEtQxb0', null],
];

/** The API URL of the video a URL names, or undefined. */
export function peertubeVideoApi(url: URL): string | undefined {
  for (const pattern of PEERTUBE_PATTERNS) {
    const m = pattern.exec(url.href);
    if (m) return `${url.origin}/api/v1/videos/${m[1]}`;
  }
  return undefined;
}

const isVideo = (v: Json | undefined): v is Json =>
  Boolean(v && typeof v.uuid === 'string' && (Array.isArray(v.files) || Array.isArray(v.streamingPlaylists)));

/** PeerTube explains failures as problem details ({status, detail, code}); older versions as {error}. */
/** What an instance's error answer means: gone or private (worded by `missing`) or a failure of its own. */
function peertubeFailure(status: number, body: Json | undefined, missing: (detail: string) => string): ReelayError {
  const detail = str(body?.detail) ?? str(body?.error) ?? `HTTP ${status}`;
  if ([401, 403, 404, 410].includes(status)) return new ReelayError('content_not_found', missing(detail));
  return new ReelayError('upstream_error', `The PeerTube instance failed (${detail}).`);
}

function isPeerTubeError(answer: { contentType: string }, body: Json | undefined): boolean {
  return Boolean(body && (answer.contentType === 'application/problem+json' || str(body.detail) || str(body.error)));
}

/** One file of either kind: Web Video (muxed) or HLS fragmented MP4 (muxed, video-only or audio-only). */
function fileSource(file: Json): SourceDraft | undefined {
  const url = str(file.fileUrl) ?? str(file.fileDownloadUrl);
  if (!url || !URL.canParse(url)) return undefined;
  const ext = extOf(url) || undefined;
  const size = num(file.size);
  const resolution = num(obj(file.resolution)?.id);
  // hasAudio and hasVideo exist from PeerTube 6.2; before that, resolution 0 alone marks audio.
  if (resolution === 0 || file.hasVideo === false) {
    return { url, stream_profile: 'audio_only', mime_type: 'audio/mp4', ext, size, has_audio: true, has_video: false };
  }
  const videoOnly = file.hasAudio === false;
  return {
    url,
    stream_profile: videoOnly ? 'video_only' : 'muxed_progressive',
    mime_type: ext === 'webm' ? 'video/webm' : 'video/mp4',
    ext,
    size,
    // width and height exist from 6.1; the resolution id is the video's smaller side.
    width: num(file.width),
    height: num(file.height) ?? resolution,
    fps: num(file.fps),
    has_video: true,
    has_audio: typeof file.hasAudio === 'boolean' ? file.hasAudio : undefined,
  };
}

async function videoSources(ctx: ExtractContext, video: Json): Promise<SourceDraft[]> {
  const live = video.isLive === true;
  const playlists = arr(video.streamingPlaylists)
    .map(obj)
    .filter((p): p is Json => Boolean(p));
  const files = live ? [] : [...arr(video.files), ...playlists.flatMap((p) => arr(p.files))];
  const progressive = files.flatMap((f) => {
    const file = obj(f);
    const source = file && fileSource(file);
    return source ? [source] : [];
  });
  // Type 1 is HLS, the only streaming playlist type PeerTube has.
  const masters = playlists.filter((p) => (p.type ?? 1) === 1).flatMap((p) => str(p.playlistUrl) ?? []);
  const variants = await Promise.all(masters.map((m) => manifestSources(ctx, m, progressive.length === 0)));
  return [...progressive, ...variants.flat()];
}

export const peertube: UrlExtractor = {
  name: 'peertube',
  platform: 'peertube',
  patterns: PEERTUBE_PATTERNS,
  kinds: ['video', 'audio', 'live'],
  matches: (url) => peertubeVideoApi(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const api = peertubeVideoApi(url);
    if (!api) throw new NotMyUrl('peertube', 'not a video URL');
    const answer = await getJson(ctx, api);
    if (answer.status === 429) throw rateLimited('The PeerTube instance');
    const body = obj(answer.json);
    if (answer.status === 200 && isVideo(body)) return mapVideo(ctx, url, body);
    if (answer.status < 400 || !isPeerTubeError(answer, body)) {
      throw new NotMyUrl(
        'peertube',
        `${api} answered ${answer.status} ${answer.contentType || 'without a type'}, not a PeerTube video`,
      );
    }
    throw peertubeFailure(answer.status, body, (detail) => {
      if (answer.status === 404 || answer.status === 410) return `The video was deleted or never existed (${detail}).`;
      const why =
        body?.code === 'video_requires_password' ? 'is password-protected' : 'is private or internal to the instance';
      return `The video ${why} (${detail}).`;
    });
  },
};

async function mapVideo(ctx: ExtractContext, url: URL, video: Json): Promise<ResultDraft> {
  const sources = await videoSources(ctx, video);
  if (sources.length === 0)
    throw new ReelayError('no_media_found', 'The PeerTube video has no files yet (it may still be transcoding).');
  const live = video.isLive === true;
  return {
    url: url.href,
    platform: 'peertube',
    extract_profile: 'peertube_api',
    title: str(video.name),
    describing: {
      author: str(obj(video.account)?.displayName) ?? str(obj(video.channel)?.displayName),
      upload_date: str(video.originallyPublishedAt) ?? str(video.publishedAt),
      description: str(video.description),
    },
    media: [
      {
        type: sources.every((s) => s.has_video === false) ? 'audio' : 'video',
        sources,
        // The paths are relative to the instance that answered.
        thumbnail: absolute(video.previewPath ?? video.thumbnailPath, url.origin),
        duration: live ? undefined : num(video.duration),
      },
    ],
  };
}

// Collections: playlists (/w/p/{id}), channels (/c/{name}) and accounts (/a/{name}) through
// /api/v1/video-playlists/{id}/videos, /api/v1/video-channels/{name}/videos and
// /api/v1/accounts/{name}/videos, paged with start and count (at most 100, the API's own maximum).
// The page state is the next start.
const NAME = String.raw`([\w.-]{1,64}(?:@[\w.-]{1,253})?)`;
const PLAYLIST_ID = `(${UUID}|${SHORT_UUID}|\\d{1,12})`;

export const PEERTUBE_COLLECTION_PATTERNS: readonly RegExp[] = [
  new RegExp(`^${HOST}\\/w\\/p\\/${PLAYLIST_ID}${END}`),
  new RegExp(`^${HOST}\\/videos\\/watch\\/playlist\\/${PLAYLIST_ID}${END}`),
  new RegExp(`^${HOST}\\/(?:c|video-channels)\\/${NAME}(?:\\/(?:videos|video-playlists))?${END}`),
  new RegExp(`^${HOST}\\/(?:a|accounts)\\/${NAME}(?:\\/(?:videos|video-channels|video-playlists))?${END}`),
];

interface PeerTubeListing {
  kind: 'playlist' | 'channel' | 'profile';
  /** The collection's own API URL (its name) and its list of videos. */
  info: string;
  videos: string;
}

/** The API URLs of the collection a URL names, or undefined. */
export function peertubeCollectionApi(url: URL): PeerTubeListing | undefined {
  const [playlist, watchPlaylist, channel, account] = PEERTUBE_COLLECTION_PATTERNS.map((p) => p.exec(url.href));
  const api = `${url.origin}/api/v1`;
  const id = (playlist ?? watchPlaylist)?.[1];
  if (id)
    return { kind: 'playlist', info: `${api}/video-playlists/${id}`, videos: `${api}/video-playlists/${id}/videos` };
  if (channel)
    return {
      kind: 'channel',
      info: `${api}/video-channels/${channel[1]}`,
      videos: `${api}/video-channels/${channel[1]}/videos`,
    };
  if (account)
    return { kind: 'profile', info: `${api}/accounts/${account[1]}`, videos: `${api}/accounts/${account[1]}/videos` };
  return undefined;
}

const PAGE = 100;

export const peertubeCollections: UrlExtractor = {
  name: 'peertube_collection',
  platform: 'peertube',
  patterns: PEERTUBE_COLLECTION_PATTERNS,
  kinds: ['playlist', 'channel', 'profile'],
  matches: (url) => peertubeCollectionApi(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const listing = peertubeCollectionApi(url);
    if (!listing) throw new NotMyUrl('peertube_collection', 'not a playlist, channel or account URL');
    const start = statePosition(ctx.page?.state, 0);
    const list = new URL(listing.videos);
    list.searchParams.set('start', String(start));
    list.searchParams.set('count', String(PAGE));
    if (listing.kind !== 'playlist') list.searchParams.set('sort', '-publishedAt');
    const [info, answer] = await Promise.all([getJson(ctx, listing.info), getJson(ctx, list)]);
    if (answer.status === 429 || info.status === 429) throw rateLimited('The PeerTube instance');
    const body = obj(answer.json);
    const isList = answer.status === 200 && body && typeof body.total === 'number' && Array.isArray(body.data);
    if (!isList) {
      if (answer.status < 400 || !isPeerTubeError(answer, body))
        throw new NotMyUrl('peertube_collection', `${listing.videos} answered ${answer.status}, not a PeerTube list`);
      const what = listing.kind === 'profile' ? 'account' : listing.kind;
      throw peertubeFailure(
        answer.status,
        body,
        (detail) => `The PeerTube ${what} does not exist or is not public (${detail}).`,
      );
    }
    const rows = arr(body!.data).slice(0, PAGE);
    // A playlist's rows wrap the video ({position, video}); a deleted or private one is null.
    const videos = rows.flatMap((r) => {
      const row = obj(r);
      const video = listing.kind === 'playlist' ? obj(row?.video) : row;
      return video ? [video] : [];
    });
    const total = num(body!.total)!;
    const next = rows.length > 0 && start + rows.length < total ? String(start + rows.length) : undefined;
    const about = obj(info.json);
    return {
      url: url.href,
      platform: 'peertube',
      extract_profile: 'peertube_api',
      title: str(about?.displayName) ?? str(about?.name),
      media: [],
      collection: {
        kind: listing.kind,
        entries: videos.flatMap((v) => peertubeEntry(v, url.origin)),
        entry_count: total,
        next,
      },
    };
  },
};

function peertubeEntry(video: Json, origin: string): EntryDraft[] {
  const id = str(video.shortUUID) ?? str(video.uuid);
  const own = absolute(video.url, origin);
  const url = own ?? (id ? `${origin}/w/${id}` : undefined);
  if (!url) return [];
  return [
    {
      url,
      id: str(video.uuid) ?? id,
      title: str(video.name),
      duration: num(video.duration),
      thumbnail: absolute(video.thumbnailPath ?? video.previewPath, origin),
      upload_date: str(video.originallyPublishedAt) ?? str(video.publishedAt),
    },
  ];
}
