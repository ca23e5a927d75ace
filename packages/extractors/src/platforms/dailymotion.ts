// Dailymotion: a video through the web player's metadata endpoint (no credentials). `qualities.auto`
// is an HLS master whose variants are muxed; a variant may also name a progressive MP4 of the same
// rendition (PROGRESSIVE-URI, as yt-dlp reads it), and other `qualities` keys may list MP4s. An
// `error` in the metadata replaces the qualities: DM007 is a geo-block, the others mean the video
// cannot be shown (deleted, private, password-protected).
//
// Endpoints (ctx.endpoints, env PLATFORM_DAILYMOTION_<NAME>):
//   dailymotion_www  default https://www.dailymotion.com
//   dailymotion_api  the Data API, for playlists and users   default https://api.dailymotion.com
// Download headers: none in the normal case (yt-dlp retries a 403 on the master with other
// headers; that is not done here).
import { ReelayError } from '@reelay/contracts';
import { splitCodecs, tagAttributes } from '@reelay/manifests';
import { parseHls } from '../hls.js';
import { manifestKind } from '../manifest.js';
import { subtitleFormat } from '../subtitles.js';
import { staleCursor, statePosition } from '../collection.js';
import type {
  EntryDraft,
  ExtractContext,
  MediaDraft,
  ResultDraft,
  SourceDraft,
  SubtitleDraft,
  UrlExtractor,
} from '../types.js';
import {
  absolute,
  arr,
  endpoint,
  getJson,
  num,
  obj,
  rateLimited,
  statusFailure,
  str,
  type Json,
} from './public-api.js';

const WWW = 'https://www.dailymotion.com';
// A public xid is x and lower-case base-36 characters; a private video's id is k and 18 characters of
// mixed case (k41fZWpx2TaAORA2nok), which the platform reads case-sensitively.
const XID = '(x[a-z0-9]{1,15}|k[A-Za-z0-9]{18})';
const END = String.raw`\/?(?:[?#].*)?$`;
// dailymotion.com and its country domains (yt-dlp: dailymotion.[a-z]{2,3}), and L'Équipe's own player pages.
const SITE = String.raw`(?:(?:(?:www|touch|geo)\.)?dailymotion\.[a-z]{2,3}|(?:www\.)?lequipe\.fr)`;

export const DAILYMOTION_PATTERNS: readonly RegExp[] = [
  // /video/{xid}, the old /video/{xid}_{slug}, the /embed/video/{xid} iframe, the /crawler/video/{xid}
  // page for search engines, and the old Flash player's /swf/video/{xid} and /swf/{xid}.
  new RegExp(`^https?:\\/\\/${SITE}\\/(?:(?:(?:embed|crawler|swf)\\/)?video|swf)\\/${XID}(?:_[^/?#]*)?${END}`, 'i'),
  new RegExp(`^https?:\\/\\/(?:www\\.)?dai\\.ly\\/${XID}${END}`, 'i'),
  // The player iframe names the video in its query: /player.html?video= or /player/{playerId}.html?video=.
  new RegExp(
    `^https?:\\/\\/geo\\.dailymotion\\.com\\/player(?:\\/[\\w-]+)?\\.html\\?(?:[^#]*&)?video=${XID}(?:[&#].*)?$`,
    'i',
  ),
];

/** URL shapes and the xid each names (null: not a Dailymotion video). The tests check every line. */
export const DAILYMOTION_URL_CASES: readonly (readonly [string, string | null])[] = [
  ['https://www.dailymotion.com/video/x8abc12', 'x8abc12'],
  [
    'https://www.dailymotion.com/video/x5kesuj_office-christmas-party-review-jason-bateman-olivia-munn-t-j-miller_news',
    'x5kesuj',
  ],
  ['https://dailymotion.com/video/x8abc12?playlist=x6hynp', 'x8abc12'],
  ['https://touch.dailymotion.com/video/x8abc12', 'x8abc12'],
  ['https://geo.dailymotion.com/video/x8abc12', 'x8abc12'],
  ['https://www.dailymotion.com/embed/video/x8abc12?autoplay=1', 'x8abc12'],
  ['https://dai.ly/x8abc12', 'x8abc12'],
  ['https://geo.dailymotion.com/player.html?video=x8abc12', 'x8abc12'],
  ['https://geo.dailymotion.com/player/xtv3w.html?mute=true&video=x8abc12#t=10', 'x8abc12'],
  // Private videos: k and 18 mixed-case characters, kept as written.
  ['https://www.dailymotion.com/video/k41fZWpx2TaAORA2nok', 'k41fZWpx2TaAORA2nok'],
  ['https://dai.ly/k41fZWpx2TaAORA2nok', 'k41fZWpx2TaAORA2nok'],
  ['https://www.dailymotion.com/embed/video/k41fZWpx2TaAORA2nok?autoplay=1', 'k41fZWpx2TaAORA2nok'],
  ['https://geo.dailymotion.com/player/x86gw.html?video=k46oCapRs4iikoz9DWy', 'k46oCapRs4iikoz9DWy'],
  ['https://www.lequipe.fr/video/k7MtHciueyTcrFtFKA2', 'k7MtHciueyTcrFtFKA2'],
  ['https://www.lequipe.fr/video/x791mem', 'x791mem'],
  ['https://www.dailymotion.com/crawler/video/x8u4owg', 'x8u4owg'],
  ['https://www.dailymotion.com/swf/video/x3n92nf', 'x3n92nf'],
  ['https://www.dailymotion.com/swf/x3ss1m_funny-magic-trick-barry-and-stuart_fun', 'x3ss1m'],
  ['https://www.dailymotion.fr/video/x8abc12', 'x8abc12'],
  ['https://WWW.DAILYMOTION.COM/video/X8ABC12', 'x8abc12'],
  [
    'https://geo.dailymotion.com/player/xakln.html?video=x8mjju4&customConfig%5BcustomParams%5D=%2Ffr-fr%2Ftennis',
    'x8mjju4',
  ],
  ['https://www.dailymotion.com/video/k41fZWpx2TaAORA2no', null],
  ['https://www.dailymotion.com/video/k41fZWpx2TaAORA2nok1', null],
  ['https://www.dailymotion.com/search/cats/videos', null],
  ['https://www.dailymotion.com/user/someone', null],
  ['https://www.dailymotion.com/playlist/x6hynp', null],
  ['https://www.dailymotion.com/someuser', null],
  ['https://geo.dailymotion.com/player/xtv3w.html?playlist=x6hynp', null],
  ['https://dailymotion.com.example/video/x8abc12', null],
];

export function dailymotionXid(url: URL): string | undefined {
  for (const pattern of DAILYMOTION_PATTERNS) {
    const m = pattern.exec(url.href);
    // Public xids are lower case whatever the link says; private ids are kept as written.
    if (m) return /^x/i.test(m[1]) ? m[1].toLowerCase() : m[1];
  }
  return undefined;
}

/** The largest picture of a {height: url} map (posters, thumbnails). */
function largest(map: Json | undefined, base: string): string | undefined {
  const entries = Object.entries(map ?? {})
    .map(([height, url]) => [Number(height), absolute(url, base)] as const)
    .filter((e): e is readonly [number, string] => Number.isFinite(e[0]) && e[1] !== undefined)
    .sort((a, b) => b[0] - a[0]);
  return entries[0]?.[1];
}

/** Width and height from the /H264-{w}x{h}/ segment of a Dailymotion media URL. */
function h264Size(url: string): { width?: number; height?: number } {
  const m = /\/H264-(\d{2,5})x(\d{2,5})(?:[/\-_.]|$)/i.exec(url);
  return m ? { width: Number(m[1]), height: Number(m[2]) } : {};
}

/**
 * The MP4 a variant names in PROGRESSIVE-URI (a Dailymotion extension, ignored by the HLS parser):
 * one progressive file per rendition, with the variant's resolution and codecs.
 */
function progressiveUris(text: string, base: URL): SourceDraft[] {
  const sources: SourceDraft[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith('#EXT-X-STREAM-INF:')) continue;
    const attrs = tagAttributes(line);
    const uri = attrs['PROGRESSIVE-URI'];
    if (!uri || !URL.canParse(uri, base.href)) continue;
    const url = new URL(uri, base);
    url.hash = ''; // #cell=... picks a CDN cell in the player; the file is the same
    const [width, height] = (attrs.RESOLUTION ?? '').toLowerCase().split('x').map(Number);
    sources.push({
      url: url.href,
      stream_profile: 'muxed_progressive',
      mime_type: 'video/mp4',
      ext: 'mp4',
      width: width || h264Size(url.href).width,
      height: height || h264Size(url.href).height,
      bitrate: num(attrs['AVERAGE-BANDWIDTH']) ?? num(attrs.BANDWIDTH),
      fps: num(attrs['FRAME-RATE']),
      codecs: attrs.CODECS,
      has_video: true,
      has_audio: attrs.CODECS ? splitCodecs(attrs.CODECS).audio.length > 0 : undefined,
    });
  }
  return sources;
}

/** The HLS master's variants and their progressive twins. Fatal only when nothing else is listed. */
async function hlsSources(ctx: ExtractContext, url: string, required: boolean): Promise<SourceDraft[]> {
  try {
    const res = await ctx.egress.fetchText(url, { signal: ctx.signal });
    const base = new URL(res.url);
    return [
      ...parseHls(res.text, base, { maxSegments: ctx.maxSegments, fetchedAs: new URL(url) }).flatMap(
        (item) => item.sources,
      ),
      ...progressiveUris(res.text, base),
    ];
  } catch (err) {
    if (required || ctx.signal?.aborted) throw err;
    ctx.log?.('dailymotion: HLS master left out', { url, error: err instanceof Error ? err.message : String(err) });
    return [];
  }
}

function metadataError(error: Json): ReelayError {
  const code = str(error.code) ?? 'unknown';
  const title = str(error.title) ?? str(error.message) ?? 'the video is unavailable';
  if (code === 'DM007')
    return new ReelayError(
      'upstream_error',
      `Dailymotion does not show this video in the server's country (${code}: ${title}).`,
    );
  return new ReelayError('content_not_found', `Dailymotion cannot show this video (${code}: ${title}).`);
}

/** `subtitles.data`: language → {label, urls}, WebVTT files on Dailymotion's static host; the first URL of each. */
function subtitlesOf(subtitles: Json | undefined, base: string): SubtitleDraft[] {
  return Object.entries(obj(subtitles?.data) ?? {}).flatMap(([language, entry]) => {
    const url = arr(obj(entry)?.urls)
      .map((u) => absolute(u, base))
      .find((u) => u !== undefined);
    if (!url) return [];
    const format = subtitleFormat(url) ?? 'vtt';
    return format === 'hls' || format === 'dash' ? [] : [{ language, label: str(obj(entry)?.label), url, format }];
  });
}

export const dailymotion: UrlExtractor = {
  name: 'dailymotion',
  platform: 'dailymotion',
  patterns: DAILYMOTION_PATTERNS,
  kinds: ['video'],
  matches: (url) => dailymotionXid(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const xid = dailymotionXid(url);
    if (!xid) throw new ReelayError('invalid_url', 'This is not a Dailymotion video URL.');
    const www = endpoint(ctx, 'dailymotion_www', WWW);
    const answer = await getJson(ctx, `${www}/player/metadata/video/${xid}?app=com.dailymotion.neon`);
    if (answer.status === 429) throw rateLimited('Dailymotion');
    const meta = obj(answer.json);
    const error = obj(meta?.error);
    if (error) throw metadataError(error);
    if (answer.status !== 200) throw statusFailure('Dailymotion', answer.status);
    if (!meta) throw new ReelayError('upstream_error', 'Dailymotion answered with something other than JSON.');

    const manifests: string[] = [];
    const progressive: SourceDraft[] = [];
    for (const [quality, list] of Object.entries(obj(meta.qualities) ?? {})) {
      for (const entry of arr(list)) {
        const type = str(obj(entry)?.type);
        const mediaUrl = absolute(obj(entry)?.url, www);
        // The lumberjack manifest is the player's analytics, not media.
        if (!mediaUrl || type === 'application/vnd.lumberjack.manifest') continue;
        if (manifestKind(mediaUrl, type) === 'hls') {
          manifests.push(mediaUrl);
        } else if (type?.startsWith('video/') || /\.mp4$/i.test(new URL(mediaUrl).pathname)) {
          const size = h264Size(mediaUrl);
          progressive.push({
            url: mediaUrl,
            stream_profile: 'muxed_progressive',
            mime_type: type ?? 'video/mp4',
            ext: 'mp4',
            width: size.width,
            height: size.height ?? num(quality),
          });
        }
      }
    }
    const variants = await Promise.all(manifests.map((m) => hlsSources(ctx, m, progressive.length === 0)));
    const sources = [...progressive, ...variants.flat()];
    if (sources.length === 0)
      throw new ReelayError('no_media_found', 'Dailymotion lists no playable stream for this video.');
    const item: MediaDraft = {
      type: 'video',
      sources,
      thumbnail: largest(obj(meta.posters), www) ?? largest(obj(meta.thumbnails), www),
      duration: num(meta.duration),
    };
    const subtitles = subtitlesOf(obj(meta.subtitles), www);
    if (subtitles.length) item.subtitles = subtitles;
    return {
      url: url.href,
      platform: 'dailymotion',
      extract_profile: 'dailymotion_metadata',
      title: str(meta.title),
      describing: {
        author: str(obj(meta.owner)?.screenname) ?? str(obj(meta.owner)?.username),
        upload_date: num(meta.created_time),
        description: str(meta.description),
      },
      media: [item],
    };
  },
};

// Collections: playlists (/playlist/{xid}) and users' videos (/{user}, /{user}/videos) through the
// public Data API: GET {api}/playlist/{xid}/videos or /user/{user}/videos with fields, limit 100 (the
// API's maximum) and page, which is the page state. The name comes from /playlist/{xid} or
// /user/{user} in the same round.
//   dailymotion_api  default https://api.dailymotion.com
const API = 'https://api.dailymotion.com';
/** First path segments of dailymotion.com that are not user names. */
const RESERVED =
  '(?:video|playlist|embed|player|search|channel|live|library|signin|signup|settings|partner|us|fr|de|es|it|pt|legal|about|help|upload|feed|following|tag|hub|static|cdn|api|oauth)';
export const DAILYMOTION_COLLECTION_PATTERNS: readonly RegExp[] = [
  new RegExp(
    `^https?:\\/\\/(?:(?:www|touch)\\.)?dailymotion\\.com\\/playlist\\/(x[a-z0-9]{1,16})(?:_[^/?#]*)?${END}`,
    'i',
  ),
  new RegExp(
    `^https?:\\/\\/(?:(?:www|touch)\\.)?dailymotion\\.com\\/(?!${RESERVED}(?:[/?#]|$))([A-Za-z0-9_-]{2,64})(?:\\/videos)?${END}`,
    'i',
  ),
];

export function dailymotionCollection(url: URL): { kind: 'playlist' | 'channel'; path: string } | undefined {
  const [playlist, user] = DAILYMOTION_COLLECTION_PATTERNS.map((p) => p.exec(url.href));
  if (playlist) return { kind: 'playlist', path: `/playlist/${playlist[1].toLowerCase()}` };
  if (user) return { kind: 'channel', path: `/user/${user[1]}` };
  return undefined;
}

const FIELDS = 'id,title,duration,thumbnail_720_url,created_time,url';

export const dailymotionCollections: UrlExtractor = {
  name: 'dailymotion_collection',
  platform: 'dailymotion',
  patterns: DAILYMOTION_COLLECTION_PATTERNS,
  kinds: ['playlist', 'channel'],
  matches: (url) => dailymotionCollection(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const target = dailymotionCollection(url);
    if (!target) throw new ReelayError('invalid_url', 'This is not a Dailymotion playlist or user URL.');
    const page = statePosition(ctx.page?.state, 1);
    if (page < 1) throw staleCursor();
    const api = endpoint(ctx, 'dailymotion_api', API);
    const list = new URL(`${api}${target.path}/videos`);
    list.searchParams.set('fields', FIELDS);
    list.searchParams.set('limit', '100');
    list.searchParams.set('page', String(page));
    const about = new URL(`${api}${target.path}`);
    about.searchParams.set('fields', target.kind === 'playlist' ? 'name,videos_total' : 'screenname,videos_total');
    const [answer, info] = await Promise.all([getJson(ctx, list), getJson(ctx, about)]);
    if (answer.status === 429 || info.status === 429) throw rateLimited('Dailymotion');
    const body = obj(answer.json);
    const error = obj(body?.error);
    if (
      answer.status === 404 ||
      answer.status === 410 ||
      (error && /not.?found|does not exist/i.test(`${str(error.type)} ${str(error.message)}`))
    ) {
      throw new ReelayError(
        'content_not_found',
        `Dailymotion has no such ${target.kind === 'playlist' ? 'playlist' : 'user'}.`,
      );
    }
    if (answer.status !== 200 || !body || !Array.isArray(body.list))
      throw statusFailure('Dailymotion', answer.status, str(error?.message));
    const meta = obj(info.json);
    const videos = arr(body.list)
      .slice(0, 100)
      .flatMap((v) => (obj(v) ? [obj(v)!] : []));
    return {
      url: url.href,
      platform: 'dailymotion',
      extract_profile: 'dailymotion_api',
      title: str(meta?.name) ?? str(meta?.screenname),
      media: [],
      collection: {
        kind: target.kind,
        entries: videos.flatMap(dailymotionEntry),
        entry_count: num(meta?.videos_total) ?? num(body.total),
        next: body.has_more === true && videos.length > 0 ? String(page + 1) : undefined,
      },
    };
  },
};

function dailymotionEntry(video: Json): EntryDraft[] {
  const id = str(video.id);
  const own = str(video.url);
  const url =
    own && /^https?:\/\/(?:www\.)?dailymotion\.com\/video\//i.test(own)
      ? own
      : id && /^[a-z0-9]{2,16}$/i.test(id)
        ? `${WWW}/video/${id}`
        : undefined;
  if (!url) return [];
  return [
    {
      url,
      id,
      title: str(video.title),
      duration: num(video.duration),
      thumbnail: str(video.thumbnail_720_url),
      upload_date: num(video.created_time),
    },
  ];
}
