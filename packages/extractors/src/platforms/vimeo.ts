// Vimeo: the embed player page carries the whole player config as a JSON object literal in a script
// (`playerConfig = {…}`); its `request.files` lists progressive MP4s (muxed) and the HLS and DASH
// manifests per CDN, which are expanded into their variants. Every source is recorded with the
// player as Referer, because domain-restricted (embed-only) videos are refused without one.
//
// Endpoints (ctx.endpoints, from PLATFORM_VIMEO_<NAME>):
//   vimeo_player  default https://player.vimeo.com (GET /video/{id}[?h={hash}])
import { ReelayError } from '@reelay/contracts';
import { MAX_PAGE_BYTES } from '@reelay/egress';
import type { ExtractContext, MediaDraft, ResultDraft, SourceDraft, SubtitleDraft, UrlExtractor } from '../types.js';
import { endpoint, getJson, manifestSources, obj, parseJson, statusFailure, str } from './public-api.js';

const PLAYER = 'https://player.vimeo.com';
const HEADERS = { referer: 'https://player.vimeo.com/' };
/** `view` in the player config of a password-protected video. */
const VIEW_PASSWORD = 4;

const VIMEO = String.raw`^https?://(?:www\.)?vimeo\.com`;
const END = String.raw`/?(?:[?#]|$)`;
// Unlisted videos carry a hash (10 hex characters) in the path or as ?h=.
const PATTERNS: RegExp[] = [
  new RegExp(`${VIMEO}/(?<id>\\d+)(?:/(?<hash>[0-9a-f]{6,}))?${END}`, 'i'),
  /^https?:\/\/player\.vimeo\.com\/video\/(?<id>\d+)\/?(?:[?#]|$)/i,
  new RegExp(`${VIMEO}/channels/[^/?#]+/(?<id>\\d+)${END}`, 'i'),
  new RegExp(`${VIMEO}/groups/[^/?#]+/videos/(?<id>\\d+)${END}`, 'i'),
  new RegExp(`${VIMEO}/(?:album|showcase)/\\d+/video/(?<id>\\d+)${END}`, 'i'),
  new RegExp(`${VIMEO}/[^/?#]+/review/(?<id>\\d+)/(?<hash>[0-9a-f]+)${END}`, 'i'),
];

export function vimeoRoute(url: URL): { id: string; hash?: string } | undefined {
  for (const pattern of PATTERNS) {
    const m = pattern.exec(url.href);
    if (m?.groups) return { id: m.groups.id, hash: m.groups.hash ?? url.searchParams.get('h') ?? undefined };
  }
  return undefined;
}

interface Cdns {
  default_cdn?: string;
  cdns?: Record<string, { url?: string }>;
}
interface PlayerConfig {
  view?: number;
  request?: {
    files?: {
      progressive?: { url?: string; quality?: string; width?: number; height?: number; fps?: number; mime?: string }[];
      hls?: Cdns;
      dash?: Cdns;
    };
    /** Captions and subtitles: WebVTT files, `url` relative to the player's host. */
    text_tracks?: { lang?: string; url?: string; kind?: string; label?: string }[];
  };
  video?: { title?: string; duration?: number; owner?: { name?: string }; thumbs?: Record<string, string> };
  message?: string;
  title?: string;
}

/** The end (exclusive) of the JSON object starting at `start`, skipping braces inside strings. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * The player config in a player page: the object after `playerConfig =` (also `window.playerConfig =`),
 * or, on older pages, `config =`. Scanned by balanced braces, since the object is followed by more script.
 */
export function findPlayerConfig(html: string): PlayerConfig | undefined {
  for (const marker of [/\bplayerConfig\s*=\s*(?=\{)/g, /\bconfig\s*=\s*(?=\{)/g]) {
    for (const m of html.matchAll(marker)) {
      const start = m.index + m[0].length;
      const end = objectEnd(html, start);
      if (end < 0) continue;
      // Not JSON (a script object literal of the same name): try the next occurrence.
      const config = obj(parseJson(html.slice(start, end))) as PlayerConfig | undefined;
      if (config && (config.request || config.video)) return config;
    }
  }
  return undefined;
}

async function fetchConfig(id: string, hash: string | undefined, ctx: ExtractContext): Promise<PlayerConfig> {
  const page = new URL(`${endpoint(ctx, 'vimeo_player', PLAYER)}/video/${id}`);
  if (hash) page.searchParams.set('h', hash);
  const res = await getJson(
    ctx,
    page,
    {},
    { accept: 'text/html,application/json;q=0.9,*/*;q=0.8', maxBytes: MAX_PAGE_BYTES },
  );
  if (res.status === 404 || res.status === 410)
    throw new ReelayError('content_not_found', 'This Vimeo video does not exist or was deleted.');
  const error = obj(res.json) as PlayerConfig | undefined;
  if (res.status === 403 || res.status === 401) {
    // The player explains a refusal in its page (or in JSON): privacy settings mean the video is not public.
    if (/privacy settings|video is private|password/i.test(error?.message ?? res.text)) {
      throw new ReelayError(
        'content_not_found',
        'This Vimeo video is private or may only be played on the sites its owner allows.',
      );
    }
    throw new ReelayError(
      'upstream_error',
      "Vimeo refused this server's request (403); it blocks many datacenter IPs.",
    );
  }
  if (res.status >= 400) throw statusFailure('Vimeo', res.status, 'player');
  const config = findPlayerConfig(res.text) ?? (error?.request ? error : undefined);
  if (!config) {
    if (error?.message) throw new ReelayError('content_not_found', `Vimeo cannot play this video: ${error.message}`);
    throw new ReelayError('upstream_error', "Vimeo's player page holds no player config.");
  }
  if (config.view === VIEW_PASSWORD)
    throw new ReelayError('content_not_found', 'This Vimeo video is password-protected.');
  return config;
}

function cdnUrl(files: Cdns | undefined): string | undefined {
  const cdns = files?.cdns ?? {};
  return (files?.default_cdn ? cdns[files.default_cdn]?.url : undefined) ?? Object.values(cdns).find((c) => c.url)?.url;
}

/** The MPD URL of a DASH entry: `master.json` (a Vimeo JSON manifest) has an MPD twin; `json=1` URLs name it in `url`. */
async function dashManifestUrl(url: string, ctx: ExtractContext): Promise<string> {
  if (!/[?&]json=1(?:&|$)/.test(url)) return url.replace(/\/master\.json(?=$|\?)/, '/master.mpd');
  const res = await ctx.egress.fetchText(url, { headers: HEADERS, signal: ctx.signal });
  const target = str(obj(parseJson(res.text))?.url);
  if (!target || !URL.canParse(target, res.url))
    throw new ReelayError('upstream_error', "Vimeo's DASH pointer names no manifest.");
  return new URL(target, res.url).href;
}

function largestThumb(thumbs: Record<string, string> | undefined): string | undefined {
  if (!thumbs) return undefined;
  const sized = Object.entries(thumbs)
    .filter(([k]) => /^\d+$/.test(k))
    .sort(([a], [b]) => Number(b) - Number(a));
  return sized[0]?.[1] ?? thumbs.base;
}

/** The player's text tracks as subtitles, fetched like the files with the player as Referer. */
function textTracks(config: PlayerConfig, ctx: ExtractContext): SubtitleDraft[] {
  const player = endpoint(ctx, 'vimeo_player', PLAYER);
  return (config.request?.text_tracks ?? []).flatMap((t) => {
    if (!t.url || !URL.canParse(t.url, player)) return [];
    return [
      {
        language: t.lang ?? 'und',
        label: t.label,
        url: new URL(t.url, player).href,
        format: 'vtt' as const,
        headers: { ...HEADERS },
      },
    ];
  });
}

export const vimeo: UrlExtractor = {
  name: 'vimeo',
  platform: 'vimeo',
  patterns: PATTERNS,
  kinds: ['video'],
  matches: (url) => vimeoRoute(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const route = vimeoRoute(url);
    if (!route) throw new ReelayError('invalid_url', 'This is not a Vimeo video URL.');
    const config = await fetchConfig(route.id, route.hash, ctx);
    const files = config.request?.files ?? {};
    const sources: SourceDraft[] = [];
    for (const p of files.progressive ?? []) {
      if (!p.url) continue;
      sources.push({
        url: p.url,
        stream_profile: 'muxed_progressive',
        quality: p.width || p.height ? undefined : p.quality,
        mime_type: p.mime ?? 'video/mp4',
        ext: 'mp4',
        width: p.width,
        height: p.height,
        fps: p.fps,
        has_audio: true,
        has_video: true,
        headers: { ...HEADERS },
      });
    }
    // A manifest that fails is logged and skipped while other files remain; it fails the extract otherwise.
    let failure: unknown;
    const addManifest = async (locate: () => Promise<string | undefined>): Promise<void> => {
      try {
        const link = await locate();
        if (link) sources.push(...(await manifestSources(ctx, link, true, HEADERS)));
      } catch (err) {
        if (err instanceof ReelayError && err.code === 'url_blocked') throw err;
        failure ??= err;
        ctx.log?.('vimeo manifest skipped', { error: err instanceof Error ? err.message : String(err) });
      }
    };
    await addManifest(async () => cdnUrl(files.hls));
    await addManifest(async () => {
      const dash = cdnUrl(files.dash);
      return dash ? dashManifestUrl(dash, ctx) : undefined;
    });
    if (sources.length === 0) {
      if (failure) throw failure;
      throw new ReelayError('no_media_found', 'Vimeo lists no playable files for this video.');
    }
    const video = config.video ?? {};
    const item: MediaDraft = {
      type: 'video',
      sources,
      duration: video.duration,
      thumbnail: largestThumb(video.thumbs),
    };
    const subtitles = textTracks(config, ctx);
    if (subtitles.length) item.subtitles = subtitles;
    return {
      url: url.href,
      platform: 'vimeo',
      extract_profile: 'vimeo_player_config',
      title: video.title ?? video.owner?.name,
      describing: { author: video.owner?.name },
      media: [item],
    };
  },
};
