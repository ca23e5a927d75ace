// X (Twitter): posts read through the public syndication endpoint that embedded posts use (no
// credentials). Its mediaDetails list photos, videos and GIFs; every MP4 variant of a video is a
// muxed progressive file, and the HLS master is expanded into its (split) variants. A post without
// media of its own falls back to the media of the post it quotes.
//
// Endpoints (ctx.endpoints, from PLATFORM_X_<NAME>):
//   x_syndication  default https://cdn.syndication.twimg.com (GET /tweet-result?id=&token=)
//   x_tco          t.co short-link base, default https://t.co
import { ReelayError } from '@reelay/contracts';
import { MAX_PAGE_BYTES } from '@reelay/egress';
import type { ExtractContext, MediaDraft, ResultDraft, SourceDraft, UrlExtractor } from '../types.js';
import { endpoint, getJson, manifestSources, statusFailure } from './public-api.js';

const SYNDICATION = 'https://cdn.syndication.twimg.com';
const TCO = 'https://t.co';
const MAX_HOPS = 3;
const TITLE_LENGTH = 100;

type Route = { kind: 'post'; id: string; index?: number } | { kind: 'short'; code: string };

// vxtwitter.com and fixvx.com are embed-fixing mirrors with the same paths (cobalt maps them back);
// m. is the older mobile host (yt-dlp still accepts it).
const HOSTS = String.raw`^https?://(?:(?:www|m|mobile)\.)?(?:twitter|x|vxtwitter|fixvx)\.com`;
const ROUTES: { pattern: RegExp; route: (g: Record<string, string>) => Route }[] = [
  {
    pattern: new RegExp(
      `${HOSTS}/(?:\\w{1,15}/status(?:es)?|i/web/status|i/status|statuses)/(?<id>\\d{1,25})(?:/(?:video|photo)/(?<n>\\d+))?(?:[/?#]|$)`,
      'i',
    ),
    route: (g) => ({ kind: 'post', id: g.id, index: g.n ? Number(g.n) : undefined }),
  },
  {
    pattern: new RegExp(`${HOSTS}/i/bookmarks\\?(?:.*&)?post_id=(?<id>\\d{1,25})(?:[&#]|$)`, 'i'),
    route: (g) => ({ kind: 'post', id: g.id }),
  },
  { pattern: /^https?:\/\/t\.co\/(?<code>[a-z0-9]+)\/?(?:[?#]|$)/i, route: (g) => ({ kind: 'short', code: g.code }) },
];

export function xRoute(url: URL): Route | undefined {
  for (const { pattern, route } of ROUTES) {
    const m = pattern.exec(url.href);
    if (m) return route(m.groups ?? {});
  }
  return undefined;
}

/**
 * The `token` the syndication endpoint checks: id / 1e15 × π in base 36, with every `0` and the `.`
 * removed (platforms.md §5). The float imprecision on 19-digit ids is part of the algorithm.
 */
export function syndicationToken(id: string): string {
  return ((Number(id) / 1e15) * Math.PI).toString(36).replace(/(0+|\.)/g, '');
}

interface Variant {
  content_type?: string;
  bitrate?: number;
  url?: string;
}
interface MediaDetail {
  type?: 'photo' | 'video' | 'animated_gif';
  media_url_https?: string;
  original_info?: { width?: number; height?: number };
  video_info?: { variants?: Variant[]; duration_millis?: number; aspect_ratio?: number[] };
}
interface Tweet {
  __typename?: string;
  id_str?: string;
  text?: string;
  user?: { name?: string; screen_name?: string };
  created_at?: string;
  mediaDetails?: MediaDetail[];
  quoted_tweet?: Tweet;
  tombstone?: { text?: { text?: string } };
  reason?: string;
}

/** Follows t.co links until a redirect names a post. */
async function resolveShort(code: string, ctx: ExtractContext): Promise<{ id: string; index?: number }> {
  let target = `${endpoint(ctx, 'x_tco', TCO)}/${code}`;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const res = await ctx.egress.open(target, {
      followRedirects: false,
      allowErrorStatus: true,
      signal: ctx.signal,
      platform: ctx.platform,
      deadlineMs: 15_000,
    });
    res.body.destroy();
    const raw = res.headers.location;
    const location = Array.isArray(raw) ? raw[0] : raw;
    if (res.status === 404 || res.status === 410)
      throw new ReelayError('content_not_found', 'This t.co link does not exist.');
    if (!(res.status >= 300 && res.status < 400) || !location || !URL.canParse(location)) {
      throw new ReelayError('upstream_error', `t.co answered ${res.status} without redirecting to a post.`);
    }
    const route = xRoute(new URL(location));
    if (route?.kind === 'post') return route;
    if (route?.kind !== 'short')
      throw new ReelayError(
        'no_media_found',
        `The t.co link leads to ${location}, which is not a post on X; extract that URL instead.`,
      );
    target = `${endpoint(ctx, 'x_tco', TCO)}/${route.code}`;
  }
  throw new ReelayError('upstream_error', `t.co redirected more than ${MAX_HOPS} times.`);
}

async function fetchTweet(id: string, ctx: ExtractContext): Promise<Tweet> {
  const api = new URL(`${endpoint(ctx, 'x_syndication', SYNDICATION)}/tweet-result`);
  api.searchParams.set('id', id);
  api.searchParams.set('token', syndicationToken(id));
  const res = await getJson(ctx, api, {}, { maxBytes: MAX_PAGE_BYTES });
  if (res.status === 404 || res.status === 410)
    throw new ReelayError('content_not_found', 'This post on X does not exist or was deleted.');
  if (res.status >= 400) throw statusFailure('X', res.status, 'syndication endpoint');
  // An unknown or withdrawn id is answered 200 with an empty body or an empty object.
  if (!res.text.trim()) throw new ReelayError('content_not_found', 'This post on X does not exist or is not public.');
  if (res.json === undefined)
    throw new ReelayError('upstream_error', "X's syndication endpoint answered with something other than JSON.");
  const tweet = res.json as Tweet;
  if (!tweet || typeof tweet !== 'object' || Object.keys(tweet).length === 0)
    throw new ReelayError('content_not_found', 'This post on X does not exist or is not public.');
  if (tweet.__typename === 'TweetTombstone') {
    const why = tweet.tombstone?.text?.text?.replace(/\s*Learn more\.?$/, '');
    throw new ReelayError(
      'content_not_found',
      why ? `This post on X is unavailable: ${why}` : 'This post on X is unavailable.',
    );
  }
  if (tweet.__typename === 'TweetUnavailable') {
    if (tweet.reason === 'Protected')
      throw new ReelayError('content_not_found', 'This post on X is from a protected account.');
    throw new ReelayError(
      'upstream_error',
      `X shows this post only to signed-in users (${tweet.reason ?? 'unavailable'}).`,
    );
  }
  return tweet;
}

/** Width and height from a variant path (`…/vid/avc1/1280x720/…`). */
function dimensions(url: string): { width?: number; height?: number } {
  const m = /\/(\d{2,5})x(\d{2,5})\//.exec(url);
  return m ? { width: Number(m[1]), height: Number(m[2]) } : {};
}

function photoUrl(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const u = new URL(url);
  u.searchParams.set('name', 'orig');
  return u.href;
}

async function videoSources(m: MediaDetail, ctx: ExtractContext): Promise<SourceDraft[]> {
  const gif = m.type === 'animated_gif';
  const variants = m.video_info?.variants ?? [];
  const sources: SourceDraft[] = [];
  for (const v of variants) {
    if (!v.url || v.content_type !== 'video/mp4') continue;
    const size = dimensions(v.url);
    sources.push({
      url: v.url,
      // A GIF is one silent MP4: a single video track.
      stream_profile: gif ? 'video_only' : 'muxed_progressive',
      mime_type: 'video/mp4',
      ext: 'mp4',
      bitrate: v.bitrate || undefined,
      width: size.width ?? (gif ? m.original_info?.width : undefined),
      height: size.height ?? (gif ? m.original_info?.height : undefined),
      has_audio: !gif,
      has_video: true,
    });
  }
  for (const v of variants) {
    if (!v.url || v.content_type?.toLowerCase() !== 'application/x-mpegurl') continue;
    // The MP4 variants are the same video; the manifest only adds choices.
    sources.push(...(await manifestSources(ctx, v.url, sources.length === 0)));
  }
  return sources;
}

async function mediaItem(m: MediaDetail, ctx: ExtractContext): Promise<MediaDraft | undefined> {
  const thumbnail = m.media_url_https;
  const photo = m.type === 'photo' && thumbnail ? photoUrl(thumbnail) : undefined;
  if (photo)
    return {
      type: 'image',
      sources: [
        { url: photo, stream_profile: 'image', width: m.original_info?.width, height: m.original_info?.height },
      ],
    };
  if (m.type === 'video' || m.type === 'animated_gif') {
    const sources = await videoSources(m, ctx);
    const ms = m.video_info?.duration_millis;
    return sources.length ? { type: 'video', sources, thumbnail, duration: ms ? ms / 1000 : undefined } : undefined;
  }
  return undefined;
}

/** The post's text without the trailing t.co link to its own media, shortened on a word boundary. */
export function tweetTitle(tweet: Tweet): string | undefined {
  const text = tweet.text
    ?.replace(/(?:\s*https:\/\/t\.co\/\w+)+\s*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (text) {
    if (text.length <= TITLE_LENGTH) return text;
    const cut = text.slice(0, TITLE_LENGTH - 1);
    return `${cut.slice(0, cut.lastIndexOf(' ') > 40 ? cut.lastIndexOf(' ') : cut.length)}…`;
  }
  const { name, screen_name: handle } = tweet.user ?? {};
  if (name && handle) return `${name} (@${handle})`;
  return name || (handle ? `@${handle}` : undefined);
}

export const x: UrlExtractor = {
  name: 'x',
  platform: 'x',
  patterns: ROUTES.map((r) => r.pattern),
  kinds: ['video', 'image', 'gallery'],
  matches: (url) => xRoute(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const route = xRoute(url);
    if (!route) throw new ReelayError('invalid_url', 'This is not a post URL on X.');
    const { id, index } = route.kind === 'post' ? route : await resolveShort(route.code, ctx);
    const tweet = await fetchTweet(id, ctx);
    const own = tweet.mediaDetails ?? [];
    const details = own.length ? own : (tweet.quoted_tweet?.mediaDetails ?? []);
    // /video/{n} and /photo/{n} name one item, counted from 1 across all of the post's media.
    const chosen = index && index <= details.length ? [details[index - 1]] : details;
    const media = (await Promise.all(chosen.map((m) => mediaItem(m, ctx)))).filter(
      (m): m is MediaDraft => m !== undefined,
    );
    if (media.length === 0) throw new ReelayError('no_media_found', 'This post on X has no photo, video or GIF.');
    return {
      url: url.href,
      platform: 'x',
      extract_profile: 'x_syndication',
      title: tweetTitle(tweet) ?? tweetTitle(tweet.quoted_tweet ?? {}),
      describing: {
        author: tweet.user?.name ?? tweet.user?.screen_name,
        upload_date: tweet.created_at,
        description: withoutMediaLinks(tweet.text),
      },
      media,
    };
  },
};

/** A post's text without the t.co links X appends for its own media; undefined when nothing else is left. */
function withoutMediaLinks(text: string | undefined): string | undefined {
  return text?.replace(/https:\/\/t\.co\/\w+/g, '').trim() || undefined;
}
