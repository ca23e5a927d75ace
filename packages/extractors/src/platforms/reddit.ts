// Reddit: posts read through the public JSON API (`/comments/{id}.json`), short links followed to the
// post they name, i.redd.it files taken as they are. Reddit videos are split: the DASH manifest
// lists a video-only and an audio-only file (a merge pair of one item); without a manifest the
// `fallback_url` is the video and the audio file is found by probing its known names.
//
// Endpoints (ctx.endpoints, from PLATFORM_REDDIT_<NAME>):
//   reddit_www    API and share-link base, default https://www.reddit.com
//   reddit_video  where v.redd.it ids resolve (`{base}/video/{id}` redirects to the post),
//                 default reddit_www (cobalt maps v.redd.it/{id} to reddit.com/video/{id})
//   reddit_image  i.redd.it base, default https://i.redd.it
import { ReelayError } from '@reelay/contracts';
import { MAX_PAGE_BYTES } from '@reelay/egress';
import { kindOfMime, mimeOfExt } from '../media-types.js';
import { stateToken } from '../collection.js';
import type { EntryDraft, ExtractContext, MediaDraft, ResultDraft, SourceDraft, UrlExtractor } from '../types.js';
import { endpoint, extOf, getJson, manifestSources, statusFailure } from './public-api.js';

const WWW = 'https://www.reddit.com';
const I_REDD_IT = 'https://i.redd.it';
// Reddit asks API clients for a descriptive User-Agent and throttles generic ones hardest.
const USER_AGENT = 'server:reelay:0.1 (media extraction service)';
const MAX_HOPS = 5;
/** Audio file names next to a fallback video, newest scheme first (cobalt, platforms.md §4). */
const AUDIO_NAMES = ['DASH_AUDIO_128.mp4', 'DASH_AUDIO_64.mp4', 'DASH_audio.mp4', 'audio'];

type Route =
  { kind: 'post'; id: string } | { kind: 'share' } | { kind: 'video'; id: string } | { kind: 'image'; file: string };

const REDDIT = String.raw`^https?://(?:[a-z0-9-]+\.)?reddit\.com`;
const END = String.raw`(?:[/?#]|$)`;
const ROUTES: { pattern: RegExp; route: (g: Record<string, string>) => Route }[] = [
  // /r/{sub}/comments/{id}/{slug}/{comment}, /comments/{id}, /user/{u}/comments/{id}, /r/u_{u}/…, …/comment/{cid}
  {
    pattern: new RegExp(`${REDDIT}/(?:(?:r|u|user)/[^/?#]+/)?comments/(?<id>[a-z0-9]+)${END}`, 'i'),
    route: (g) => ({ kind: 'post', id: g.id.toLowerCase() }),
  },
  {
    pattern: new RegExp(`${REDDIT}/gallery/(?<id>[a-z0-9]+)${END}`, 'i'),
    route: (g) => ({ kind: 'post', id: g.id.toLowerCase() }),
  },
  {
    pattern: new RegExp(`${REDDIT}/(?:r|u|user)/[^/?#]+/s/[a-z0-9]+/?(?:[?#]|$)`, 'i'),
    route: () => ({ kind: 'share' }),
  },
  { pattern: new RegExp(`${REDDIT}/video/(?<id>[a-z0-9]+)${END}`, 'i'), route: (g) => ({ kind: 'video', id: g.id }) },
  {
    pattern: new RegExp(`^https?://v\\.redd\\.it/(?<id>[a-z0-9]+)${END}`, 'i'),
    route: (g) => ({ kind: 'video', id: g.id }),
  },
  {
    pattern: new RegExp(`^https?://(?:www\\.)?redd\\.it/(?<id>[a-z0-9]+)/?(?:[?#]|$)`, 'i'),
    route: (g) => ({ kind: 'post', id: g.id.toLowerCase() }),
  },
  {
    pattern: /^https?:\/\/i\.redd\.it\/(?<file>[\w-]+\.(?:jpe?g|png|gif|webp))(?:[?#]|$)/i,
    route: (g) => ({ kind: 'image', file: g.file }),
  },
];

export function redditRoute(url: URL): Route | undefined {
  for (const { pattern, route } of ROUTES) {
    const m = pattern.exec(url.href);
    if (m) return route(m.groups ?? {});
  }
  return undefined;
}

// The fields read, as platforms.md §4 lists them; everything is optional because Reddit omits freely.
interface RedditVideo {
  fallback_url?: string;
  dash_url?: string;
  hls_url?: string;
  width?: number;
  height?: number;
  bitrate_kbps?: number;
  duration?: number;
  has_audio?: boolean;
  is_gif?: boolean;
}
interface MediaMeta {
  status?: string;
  e?: string;
  m?: string;
  s?: { u?: string; gif?: string; mp4?: string; x?: number; y?: number };
  hlsUrl?: string;
  dashUrl?: string;
  x?: number;
  y?: number;
}
interface ImageSet {
  source?: { url?: string; width?: number; height?: number };
  variants?: { mp4?: { source?: { url?: string; width?: number; height?: number } } };
}
interface Post {
  title?: string;
  author?: string;
  created_utc?: number;
  url?: string;
  url_overridden_by_dest?: string;
  post_hint?: string;
  is_self?: boolean;
  removed_by_category?: string | null;
  thumbnail?: string;
  secure_media?: { reddit_video?: RedditVideo } | null;
  media?: { reddit_video?: RedditVideo } | null;
  is_gallery?: boolean;
  gallery_data?: { items?: { media_id: string; caption?: string }[] };
  media_metadata?: Record<string, MediaMeta> | null;
  preview?: { images?: ImageSet[] };
  crosspost_parent_list?: Post[];
}

/** URLs in Reddit JSON are HTML-escaped unless raw_json=1 was honoured; unescaping is idempotent for URLs. */
function unescapeUrl(url: string | undefined): string | undefined {
  return url?.replace(/&amp;/g, '&') || undefined;
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Follows a share or v.redd.it link one hop at a time until a redirect names a post. */
async function resolveToPost(start: URL, ctx: ExtractContext): Promise<string> {
  let logical = start;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const route = redditRoute(logical);
    if (route?.kind === 'post') return route.id;
    // Only the host changes for overrides: the short link's path is what Reddit resolves.
    const target =
      route?.kind === 'video'
        ? `${endpoint(ctx, 'reddit_video', endpoint(ctx, 'reddit_www', WWW))}/video/${route.id}`
        : `${endpoint(ctx, 'reddit_www', WWW)}${logical.pathname}`;
    const res = await ctx.egress.open(target, {
      followRedirects: false,
      allowErrorStatus: true,
      headers: { 'user-agent': USER_AGENT },
      signal: ctx.signal,
      platform: ctx.platform,
      deadlineMs: 15_000,
    });
    res.body.destroy();
    const location = header(res.headers.location);
    if (res.status >= 300 && res.status < 400 && location && URL.canParse(location, logical.href)) {
      logical = new URL(location, logical);
      const next = redditRoute(logical);
      if (!next || next.kind === 'image')
        throw new ReelayError(
          'no_media_found',
          `The Reddit link leads to ${logical.href}, which is not a post; extract that URL instead.`,
        );
      continue;
    }
    if (res.status === 404 || res.status === 410)
      throw new ReelayError('content_not_found', 'This Reddit link does not lead to a post (404).');
    if (res.status < 400)
      throw new ReelayError(
        'upstream_error',
        `Reddit answered the short link with ${res.status} instead of a redirect to the post.`,
      );
    throw statusOrBlocked(res.status, 'resolving the short link');
  }
  throw new ReelayError('upstream_error', `Reddit redirected the link more than ${MAX_HOPS} times.`);
}

function statusOrBlocked(status: number, doing: string): ReelayError {
  // Reddit's 403 without a reason is its block of datacenter IPs, worth saying as such.
  if (status === 403) return new ReelayError('upstream_error', "Reddit refused this server's IP (403).");
  return statusFailure('Reddit', status, doing);
}

async function fetchPost(id: string, ctx: ExtractContext): Promise<Post> {
  const api = new URL(`${endpoint(ctx, 'reddit_www', WWW)}/comments/${id}.json`);
  api.searchParams.set('raw_json', '1');
  // A post with many comments is large; the page limit (5 MB), not the API one, applies.
  const res = await getJson(ctx, api, { 'user-agent': USER_AGENT }, { maxBytes: MAX_PAGE_BYTES });
  const body = res.json;
  if (res.status === 404 || res.status === 410)
    throw new ReelayError('content_not_found', 'This Reddit post does not exist or was deleted.');
  if (res.status === 403 && body) {
    const reason = (body as { reason?: string }).reason;
    if (reason === 'private') throw new ReelayError('content_not_found', 'This Reddit post is in a private community.');
    if (reason === 'banned') throw new ReelayError('content_not_found', 'This Reddit post is in a banned community.');
    if (reason === 'quarantined')
      throw new ReelayError(
        'upstream_error',
        'This Reddit post is in a quarantined community, which Reddit shows only to signed-in users.',
      );
    throw new ReelayError('upstream_error', `Reddit refused access to this post (${reason ?? 403}).`);
  }
  if (res.status >= 400) throw statusOrBlocked(res.status, 'reading the post');
  if (body === undefined) {
    // Many datacenter IPs get an HTML "blocked" page instead of JSON (yt-dlp reports the same).
    throw new ReelayError(
      'upstream_error',
      "Reddit refused this server's IP: it answered with an HTML page instead of JSON (blocked).",
    );
  }
  const post = (body as { data?: { children?: { data?: Post }[] } }[])?.[0]?.data?.children?.[0]?.data;
  if (!post || typeof post !== 'object')
    throw new ReelayError('content_not_found', 'Reddit returned no post for this id.');
  return post;
}

/** Whether a file exists, by a one-byte GET (what cobalt does with HEAD; some CDNs refuse HEAD). */
async function probe(
  url: string,
  ctx: ExtractContext,
): Promise<{ ok: boolean; status: number; type?: string; size?: number }> {
  const res = await ctx.egress.open(url, {
    headers: { range: 'bytes=0-0' },
    identity: true,
    allowErrorStatus: true,
    signal: ctx.signal,
    deadlineMs: 10_000,
  });
  res.body.destroy();
  const total = /\/(\d+)$/.exec(header(res.headers['content-range']) ?? '')?.[1];
  const type = header(res.headers['content-type'])?.split(';')[0].trim().toLowerCase();
  return {
    ok: res.status === 200 || res.status === 206,
    status: res.status,
    type,
    size: total ? Number(total) : undefined,
  };
}

/** The first audio file that exists next to a fallback video, trying the names newest first. */
async function probeAudio(fallback: string, ctx: ExtractContext): Promise<SourceDraft | undefined> {
  for (const name of AUDIO_NAMES) {
    const url = new URL(name, fallback).href;
    if (!(await probe(url, ctx)).ok) continue;
    const kbps = /_(\d+)\.mp4$/.exec(name)?.[1];
    return {
      url,
      stream_profile: 'audio_only',
      mime_type: 'audio/mp4',
      ext: 'm4a',
      bitrate: kbps ? Number(kbps) * 1000 : undefined,
      has_audio: true,
      has_video: false,
    };
  }
  return undefined;
}

async function videoItem(video: RedditVideo, ctx: ExtractContext): Promise<SourceDraft[]> {
  const silent = video.has_audio === false || video.is_gif === true;
  const dash = unescapeUrl(video.dash_url);
  let sources = dash ? await manifestSources(ctx, dash, false) : [];
  const fallback = unescapeUrl(video.fallback_url);
  if (!sources.some((s) => s.has_video) && fallback) {
    sources = [
      {
        url: fallback,
        stream_profile: 'video_only',
        mime_type: 'video/mp4',
        ext: 'mp4',
        width: video.width,
        height: video.height,
        bitrate: video.bitrate_kbps ? video.bitrate_kbps * 1000 : undefined,
        has_audio: false,
        has_video: true,
      },
    ];
  }
  // No manifest, or one without an audio set: the audio file sits next to the fallback video.
  if (!silent && fallback && !sources.some((s) => s.has_video === false)) {
    const audio = await probeAudio(fallback, ctx);
    if (audio) sources.push(audio);
  }
  const hls = unescapeUrl(video.hls_url);
  if (hls) sources.push(...(await manifestSources(ctx, hls, false)));
  // A GIF (or a video posted muted) has no audio track, whatever a manifest variant implies.
  if (silent) sources = sources.filter((s) => s.has_video !== false).map((s) => ({ ...s, has_audio: false }));
  return sources;
}

function imageSource(url: string, width?: number, height?: number, mime?: string): SourceDraft {
  const ext = extOf(url);
  return { url, stream_profile: 'image', mime_type: mime ?? mimeOfExt(ext), ext: ext || undefined, width, height };
}

/** A silent MP4 rendering of a GIF. */
function gifVideo(url: string, width?: number, height?: number): SourceDraft {
  return {
    url,
    stream_profile: 'video_only',
    mime_type: 'video/mp4',
    ext: 'mp4',
    width,
    height,
    has_audio: false,
    has_video: true,
  };
}

/** One `media_metadata` entry (a gallery item, or media inline in a text post). */
async function metadataItem(
  meta: MediaMeta | undefined,
  ctx: ExtractContext,
  title?: string,
): Promise<MediaDraft | undefined> {
  if (!meta || meta.status !== 'valid') return undefined;
  const s = meta.s ?? {};
  if (meta.e === 'Image') {
    const url = unescapeUrl(s.u);
    return url
      ? { type: 'image', title, sources: [imageSource(url, s.x, s.y, meta.m === 'image/jpg' ? 'image/jpeg' : meta.m)] }
      : undefined;
  }
  if (meta.e === 'AnimatedImage') {
    const mp4 = unescapeUrl(s.mp4);
    const gif = unescapeUrl(s.gif);
    const sources = [
      ...(mp4 ? [gifVideo(mp4, s.x, s.y)] : []),
      ...(gif ? [imageSource(gif, s.x, s.y, 'image/gif')] : []),
    ];
    return sources.length ? { type: mp4 ? 'video' : 'image', title, sources } : undefined;
  }
  if (meta.e === 'RedditVideo') {
    const sources = await videoItem(
      { dash_url: meta.dashUrl, hls_url: meta.hlsUrl, width: meta.x, height: meta.y },
      ctx,
    );
    return sources.length ? { type: 'video', title, sources } : undefined;
  }
  return undefined;
}

function singleImage(post: Post): MediaDraft | undefined {
  const url = unescapeUrl(post.url_overridden_by_dest ?? post.url);
  const preview = post.preview?.images?.[0];
  const src = preview?.source;
  if (url && kindOfMime(mimeOfExt(extOf(url))) === 'image') {
    const image = imageSource(url, src?.width, src?.height);
    const mp4 = preview?.variants?.mp4?.source;
    const mp4Url = unescapeUrl(mp4?.url);
    if (image.ext === 'gif' && mp4Url)
      return { type: 'video', sources: [gifVideo(mp4Url, mp4?.width, mp4?.height), image] };
    return { type: 'image', sources: [image] };
  }
  const previewUrl = unescapeUrl(src?.url);
  if (post.post_hint === 'image' && previewUrl)
    return { type: 'image', sources: [imageSource(previewUrl, src?.width, src?.height)] };
  return undefined;
}

function thumbnailOf(post: Post): string | undefined {
  const preview = unescapeUrl(post.preview?.images?.[0]?.source?.url);
  if (preview) return preview;
  return post.thumbnail?.startsWith('http') ? unescapeUrl(post.thumbnail) : undefined;
}

async function mediaOf(post: Post, ctx: ExtractContext): Promise<MediaDraft[]> {
  const video = post.secure_media?.reddit_video ?? post.media?.reddit_video;
  if (video) {
    const sources = await videoItem(video, ctx);
    if (sources.length) return [{ type: 'video', sources, duration: video.duration, thumbnail: thumbnailOf(post) }];
  }
  const meta = post.media_metadata ?? {};
  if (post.is_gallery && post.gallery_data?.items?.length) {
    const items = await Promise.all(
      post.gallery_data.items.map((item) => metadataItem(meta[item.media_id], ctx, item.caption)),
    );
    return items.filter((i): i is MediaDraft => i !== undefined);
  }
  const image = singleImage(post);
  if (image) return [image];
  // Media embedded in a text post lives only in media_metadata (yt-dlp reads it the same way).
  const inline = await Promise.all(Object.values(meta).map((m) => metadataItem(m, ctx)));
  return inline.filter((i): i is MediaDraft => i !== undefined);
}

async function extractPost(url: URL, id: string, ctx: ExtractContext): Promise<ResultDraft> {
  const post = await fetchPost(id, ctx);
  let media: MediaDraft[] = [];
  // A crosspost carries no media of its own: the original post is in crosspost_parent_list.
  for (const candidate of [post, ...(post.crosspost_parent_list ?? [])]) {
    media = await mediaOf(candidate, ctx);
    if (media.length) break;
  }
  if (media.length === 0) {
    if (post.removed_by_category)
      throw new ReelayError('content_not_found', `This Reddit post was removed (${post.removed_by_category}).`);
    const link = unescapeUrl(post.url_overridden_by_dest ?? post.url);
    if (link && !post.is_self && URL.canParse(link) && !/(^|\.)(reddit\.com|redd\.it)$/i.test(new URL(link).hostname)) {
      throw new ReelayError('no_media_found', `This Reddit post links to ${link}; extract that URL instead.`);
    }
    throw new ReelayError('no_media_found', 'This Reddit post has no video, image or gallery.');
  }
  return {
    url: url.href,
    platform: 'reddit',
    extract_profile: 'reddit_json',
    title: post.title,
    describing: { author: post.author, upload_date: post.created_utc },
    media,
  };
}

async function extractImage(url: URL, file: string, ctx: ExtractContext): Promise<ResultDraft> {
  const direct = `${endpoint(ctx, 'reddit_image', I_REDD_IT)}/${file}`;
  const found = await probe(direct, ctx);
  if (found.status === 404 || found.status === 410)
    throw new ReelayError('content_not_found', 'This Reddit image does not exist or was deleted.');
  if (!found.ok) throw statusOrBlocked(found.status, 'reading the image');
  const source = imageSource(direct, undefined, undefined, found.type?.startsWith('image/') ? found.type : undefined);
  source.size = found.size;
  return {
    url: url.href,
    platform: 'reddit',
    extract_profile: 'direct_file',
    title: file.replace(/\.[a-z0-9]+$/i, ''),
    media: [{ type: 'image', sources: [source] }],
  };
}

export const reddit: UrlExtractor = {
  name: 'reddit',
  platform: 'reddit',
  patterns: ROUTES.map((r) => r.pattern),
  kinds: ['video', 'image', 'gallery'],
  matches: (url) => redditRoute(url) !== undefined,
  async extract(url, ctx) {
    const route = redditRoute(url);
    if (!route) throw new ReelayError('invalid_url', 'This is not a Reddit post URL.');
    if (route.kind === 'image') return extractImage(url, route.file, ctx);
    const id = route.kind === 'post' ? route.id : await resolveToPost(url, ctx);
    return extractPost(url, id, ctx);
  },
};

// Listings: a subreddit (/r/{sub}, /r/{sub}/{hot|new|top|rising|controversial}) or a user's posts
// (/user/{name}, /u/{name}, …/submitted) through the same JSON API ({listing}.json, 100 a page, the
// API's maximum), paged by its `after` (a fullname, t3_…), which is the page state. Entries are the
// posts that carry media (video, gallery, image); each post's page is read again by the post
// extractor.
const SORTS = '(?:hot|new|top|rising|controversial|best)';
export const REDDIT_LISTING_PATTERNS: readonly RegExp[] = [
  new RegExp(`${REDDIT}/r/(?<sub>[A-Za-z0-9_]{2,21})(?:/(?<sort>${SORTS}))?/?(?:[?#]|$)`, 'i'),
  new RegExp(`${REDDIT}/(?:u|user)/(?<user>[A-Za-z0-9_-]{3,20})(?:/(?:submitted|posts|overview))?/?(?:[?#]|$)`, 'i'),
];

/** The API path of the listing a URL names (without .json), and its title; undefined when it names none. */
export function redditListing(
  url: URL,
): { path: string; title: string; kind: 'channel' | 'profile'; time?: string } | undefined {
  const [sub, user] = REDDIT_LISTING_PATTERNS.map((p) => p.exec(url.href)?.groups);
  // ?t= (hour, day, week, month, year, all) chooses the period of a top or controversial listing.
  const t = url.searchParams.get('t');
  const time = t && /^(?:hour|day|week|month|year|all)$/.test(t) ? t : undefined;
  if (sub)
    return { path: `/r/${sub.sub}/${(sub.sort ?? 'hot').toLowerCase()}`, title: `r/${sub.sub}`, kind: 'channel', time };
  if (user) return { path: `/user/${user.user}/submitted`, title: `u/${user.user}`, kind: 'profile', time };
  return undefined;
}

export const redditListings: UrlExtractor = {
  name: 'reddit_listing',
  platform: 'reddit',
  patterns: REDDIT_LISTING_PATTERNS,
  kinds: ['channel', 'profile'],
  matches: (url) => redditListing(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const listing = redditListing(url);
    if (!listing) throw new ReelayError('invalid_url', 'This is not a Reddit subreddit or user URL.');
    const after = stateToken(ctx.page?.state, /^t3_[a-z0-9]{1,20}$/);
    const api = new URL(`${endpoint(ctx, 'reddit_www', WWW)}${listing.path}.json`);
    api.searchParams.set('limit', '100');
    api.searchParams.set('raw_json', '1');
    if (listing.time) api.searchParams.set('t', listing.time);
    if (after) api.searchParams.set('after', after);
    const res = await getJson(ctx, api, { 'user-agent': USER_AGENT }, { maxBytes: MAX_PAGE_BYTES });
    const body = res.json as { reason?: string; data?: { after?: unknown; children?: unknown } } | undefined;
    if (res.status === 404 || res.status === 410)
      throw new ReelayError(
        'content_not_found',
        `Reddit has no ${listing.title} (it was banned, deleted or never existed).`,
      );
    if (res.status === 403 && body?.reason)
      throw new ReelayError(
        body.reason === 'quarantined' ? 'upstream_error' : 'content_not_found',
        `Reddit does not show ${listing.title} (${body.reason}).`,
      );
    if (res.status >= 400) throw statusOrBlocked(res.status, 'reading the listing');
    if (body === undefined)
      throw new ReelayError(
        'upstream_error',
        "Reddit refused this server's IP: it answered with an HTML page instead of JSON (blocked).",
      );
    const children = Array.isArray(body.data?.children)
      ? (body.data.children as { kind?: string; data?: Post & { id?: string; permalink?: string } }[])
      : [];
    const posts = children
      .slice(0, 100)
      .flatMap((c) => (c?.kind === 't3' && c.data && typeof c.data === 'object' ? [c.data] : []));
    const next =
      typeof body.data?.after === 'string' && /^t3_[a-z0-9]{1,20}$/.test(body.data.after) && children.length > 0
        ? body.data.after
        : undefined;
    return {
      url: url.href,
      platform: 'reddit',
      extract_profile: 'reddit_api',
      title: listing.title,
      media: [],
      collection: { kind: listing.kind, entries: posts.flatMap(listingEntry), next },
    };
  },
};

function listingVideo(post: Post): RedditVideo | undefined {
  return (
    post.secure_media?.reddit_video ??
    post.media?.reddit_video ??
    post.crosspost_parent_list?.[0]?.secure_media?.reddit_video ??
    undefined
  );
}

/** A post with media as an entry; text posts and links elsewhere are left out. */
function listingEntry(post: Post & { id?: string; permalink?: string }): EntryDraft[] {
  const video = listingVideo(post);
  const link = unescapeUrl(post.url_overridden_by_dest ?? post.url) ?? '';
  const hasMedia =
    video !== undefined ||
    post.is_gallery === true ||
    post.post_hint === 'image' ||
    post.post_hint === 'hosted:video' ||
    /^https?:\/\/(?:i|v)\.redd\.it\//i.test(link);
  if (!hasMedia || post.removed_by_category || typeof post.permalink !== 'string' || !post.permalink.startsWith('/'))
    return [];
  const preview = unescapeUrl(post.preview?.images?.[0]?.source?.url);
  return [
    {
      url: `${WWW}${post.permalink}`,
      id: typeof post.id === 'string' ? post.id : undefined,
      title: post.title,
      duration: video?.duration,
      thumbnail: preview ?? (/^https?:\/\//.test(post.thumbnail ?? '') ? post.thumbnail : undefined),
      upload_date: post.created_utc,
    },
  ];
}
