// Bluesky (AT Protocol): a post's media through the AppView's getPostThread. A video is its HLS
// master's variants plus the uploaded original, read as a blob from the author's PDS (yt-dlp ranks
// it best); images (1-4) are image items; a link card to a Tenor GIF is that GIF; a quote post
// (record, recordWithMedia) gives its own media, else the quoted post's.
//
// Endpoints (ctx.endpoints, env PLATFORM_BLUESKY_<NAME>):
//   bluesky_api     the AppView's XRPC base            default https://public.api.bsky.app
//   bluesky_plc     the PLC directory (did:plc)        default https://plc.directory
//   bluesky_didweb  serves did:web documents in place of https://{host}  (tests, mirrors)
//   bluesky_pds     the PDS when a DID names none      default https://bsky.social
//   bluesky_tenor   Tenor's GIF host                   default https://media.tenor.com
// Download headers: none. video.bsky.app, cdn.bsky.app, PDS blobs and Tenor serve anonymous GETs.
import { ReelayError } from '@reelay/contracts';
import { stateToken } from '../collection.js';
import type { EntryDraft, ExtractContext, MediaDraft, ResultDraft, SourceDraft, UrlExtractor } from '../types.js';
import {
  arr,
  endpoint,
  getJson,
  manifestSources,
  num,
  obj,
  postTitle,
  rateLimited,
  statusFailure,
  str,
  type ApiAnswer,
  type Json,
} from './public-api.js';

const API = 'https://public.api.bsky.app';
const PLC = 'https://plc.directory';
const FALLBACK_PDS = 'https://bsky.social';
const TENOR = 'https://media.tenor.com';

/** A post on the web app (a handle or a DID as the profile) or as an at-URI; cobalt allows 128 characters per segment. */
export const BLUESKY_PATTERNS: readonly RegExp[] = [
  /^https?:\/\/(?:www\.)?(?:bsky\.app|main\.bsky\.dev)\/profile\/([\w.:%-]{1,128})\/post\/([\w.~:-]{1,128})\/?(?:[?#].*)?$/i,
  // A DID cannot be the host of a URL object (its colons read as a port), so at-URIs carry a handle
  // or a percent-encoded DID here.
  /^at:\/\/([\w.:%-]{1,128})\/app\.bsky\.feed\.post\/([\w.~:-]{1,128})$/i,
];

/** URL shapes and the at-URI each names (null: not a Bluesky post). The tests check every line. */
export const BLUESKY_URL_CASES: readonly (readonly [string, string | null])[] = [
  [
    'https://bsky.app/profile/alice.bsky.social/post/3l4omssdl632g',
    'at://alice.bsky.social/app.bsky.feed.post/3l4omssdl632g',
  ],
  [
    'https://bsky.app/profile/did:plc:z72i7hdynmk6r22z27h6tvur/post/3kb2ymbw4tq2e?ref_src=embed',
    'at://did:plc:z72i7hdynmk6r22z27h6tvur/app.bsky.feed.post/3kb2ymbw4tq2e',
  ],
  ['https://bsky.app/profile/did%3Aplc%3Aabc/post/3kb2ymbw4tq2e/', 'at://did:plc:abc/app.bsky.feed.post/3kb2ymbw4tq2e'],
  [
    'https://www.bsky.app/profile/news.example.org/post/3l6abcdefgh2x#replies',
    'at://news.example.org/app.bsky.feed.post/3l6abcdefgh2x',
  ],
  ['https://main.bsky.dev/profile/bob.test/post/3l6abcdefgh2x', 'at://bob.test/app.bsky.feed.post/3l6abcdefgh2x'],
  [
    'at://alice.bsky.social/app.bsky.feed.post/3l4omssdl632g',
    'at://alice.bsky.social/app.bsky.feed.post/3l4omssdl632g',
  ],
  ['at://did%3Aplc%3Aabc/app.bsky.feed.post/3l4omssdl632g', 'at://did:plc:abc/app.bsky.feed.post/3l4omssdl632g'],
  // A did:web profile, a custom-domain handle, and a share link's ?ref_src parameters.
  [
    'https://bsky.app/profile/did:web:bsky.example.org/post/3l4omssdl632g',
    'at://did:web:bsky.example.org/app.bsky.feed.post/3l4omssdl632g',
  ],
  [
    'https://bsky.app/profile/did:web:localhost%3A2583/post/3l4omssdl632g',
    'at://did:web:localhost:2583/app.bsky.feed.post/3l4omssdl632g',
  ],
  [
    'https://bsky.app/profile/jay.bsky.team/post/3l4omssdl632g?ref_src=embed&ref_url=https%3A%2F%2Fexample.com',
    'at://jay.bsky.team/app.bsky.feed.post/3l4omssdl632g',
  ],
  ['https://bsky.app/profile/alice.bsky.social', null],
  ['https://bsky.app/profile/alice.bsky.social/lists/3l4omssdl632g', null],
  ['https://bsky.app/search?q=cats', null],
  ['https://bsky.app/profile/alice.bsky.social/feed/whats-hot', null],
  ['https://bsky.app/profile/alice.bsky.social/post/3l4omssdl632g/liked-by', null],
  ['at://alice.bsky.social/app.bsky.actor.profile/self', null],
  ['https://bsky.app.example.com/profile/alice/post/3l4omssdl632g', null],
  ['https://example.com/profile/alice/post/3l4omssdl632g', null],
];

/** The at-URI of the post a URL names, or undefined. */
export function blueskyPostUri(url: URL): string | undefined {
  for (const pattern of BLUESKY_PATTERNS) {
    const m = pattern.exec(url.href);
    if (!m) continue;
    try {
      return `at://${decodeURIComponent(m[1])}/app.bsky.feed.post/${m[2]}`;
    } catch {
      return undefined; // a malformed percent-escape
    }
  }
  return undefined;
}

const typeOf = (view: Json | undefined): string => str(view?.$type) ?? '';

/** getPostThread failures: {error, message} bodies, and threads that are a deleted or blocked post. */
function threadError(answer: ApiAnswer, body: Json | undefined): ReelayError {
  const error = str(body?.error);
  const message = str(body?.message);
  // An unknown handle comes back as InvalidRequest "Unable to resolve handle".
  if (error === 'NotFound' || (error === 'InvalidRequest' && /resolve|not found/i.test(message ?? ''))) {
    return new ReelayError('content_not_found', `Bluesky has no such post${message ? ` (${message})` : ''}.`);
  }
  if (answer.status === 429 || error === 'RateLimitExceeded') return rateLimited('Bluesky');
  if (answer.status === 200) return new ReelayError('upstream_error', 'Bluesky answered without the post thread.');
  return statusFailure('Bluesky', answer.status, [error, message].filter(Boolean).join(': ') || undefined);
}

/** The URL of a DID's document, for did:plc (PLC directory) and did:web (the host's .well-known). */
function didDocumentUrl(ctx: ExtractContext, did: string): string | undefined {
  if (/^did:plc:[a-z0-9]+$/i.test(did)) return `${endpoint(ctx, 'bluesky_plc', PLC)}/${did}`;
  // atproto allows only host-level did:web (a port is percent-encoded), never a path.
  const web = /^did:web:([a-z0-9.-]+(?:%3A\d+)?)$/i.exec(did);
  if (web) return `${endpoint(ctx, 'bluesky_didweb', `https://${decodeURIComponent(web[1])}`)}/.well-known/did.json`;
  return undefined;
}

/** The author's PDS from their DID document (the AtprotoPersonalDataServer service), else bsky.social. */
async function resolvePds(ctx: ExtractContext, did: string): Promise<string> {
  const fallback = endpoint(ctx, 'bluesky_pds', FALLBACK_PDS);
  const docUrl = didDocumentUrl(ctx, did);
  if (!docUrl) return fallback;
  try {
    const answer = await getJson(ctx, docUrl);
    if (answer.status === 200) {
      for (const entry of arr(obj(answer.json)?.service)) {
        const service = obj(entry);
        const base = str(service?.serviceEndpoint);
        if (service?.type === 'AtprotoPersonalDataServer' && base && /^https?:\/\//i.test(base))
          return base.replace(/\/+$/, '');
      }
    }
  } catch (err) {
    if (ctx.signal?.aborted) throw err;
    ctx.log?.('bluesky: DID document unavailable, using the fallback PDS', {
      did,
      error: err instanceof Error ? err.message : String(err),
    });
  }
  return fallback;
}

/** The uploaded MP4 as a blob of the author's repository. */
async function originalVideo(
  ctx: ExtractContext,
  did: string,
  cid: string,
  view: Json,
  blob: Json | undefined,
): Promise<SourceDraft> {
  const pds = await resolvePds(ctx, did);
  const mime = str(blob?.mimeType) ?? 'video/mp4';
  const source: SourceDraft = {
    url: `${pds}/xrpc/com.atproto.sync.getBlob?did=${encodeURIComponent(did)}&cid=${encodeURIComponent(cid)}`,
    stream_profile: 'muxed_progressive',
    mime_type: mime,
    ext: mime === 'video/mp4' ? 'mp4' : undefined,
    size: num(blob?.size),
  };
  // The app writes the upload's pixel size as its aspect ratio; a reduced ratio (16:9) is no size.
  const aspect = obj(view.aspectRatio);
  const width = num(aspect?.width);
  const height = num(aspect?.height);
  if (width && height && width >= 100 && height >= 100) Object.assign(source, { width, height });
  return source;
}

async function videoItem(
  ctx: ExtractContext,
  view: Json,
  record: Json | undefined,
  did: string | undefined,
): Promise<MediaDraft> {
  const blob = obj(record?.video);
  // The view's cid is the video blob's; the raw record names it too (ref.$link).
  const cid = str(view.cid) ?? str(obj(blob?.ref)?.$link);
  const playlist = str(view.playlist);
  const [original, variants] = await Promise.all([
    did && cid ? originalVideo(ctx, did, cid, view, blob) : undefined,
    playlist ? manifestSources(ctx, playlist, !(did && cid)) : [],
  ]);
  return {
    type: 'video',
    sources: original ? [original, ...variants] : variants,
    thumbnail: str(view.thumbnail),
    title: str(view.alt),
  };
}

const IMAGE_FORMATS: Record<string, { mime: string; ext: string }> = {
  jpeg: { mime: 'image/jpeg', ext: 'jpg' },
  png: { mime: 'image/png', ext: 'png' },
  webp: { mime: 'image/webp', ext: 'webp' },
  gif: { mime: 'image/gif', ext: 'gif' },
};

function imageItems(view: Json): MediaDraft[] {
  return arr(view.images).flatMap((entry) => {
    const image = obj(entry);
    const url = str(image?.fullsize);
    if (!image || !url) return [];
    // The CDN names the encoding after an @: .../feed_fullsize/plain/{did}/{cid}@jpeg.
    const format = IMAGE_FORMATS[/@([a-z]+)$/i.exec(url)?.[1].toLowerCase() ?? ''];
    const source: SourceDraft = { url, stream_profile: 'image', mime_type: format?.mime, ext: format?.ext };
    return [{ type: 'image' as const, sources: [source], thumbnail: str(image.thumb), title: str(image.alt) }];
  });
}

/** A link card to a Tenor GIF, at full size: the ?hh=&ww= query asks Tenor for a downscaled copy. */
function gifItems(ctx: ExtractContext, view: Json): MediaDraft[] {
  const external = obj(view.external);
  const uri = str(external?.uri);
  if (!uri || !URL.canParse(uri)) return [];
  const url = new URL(uri);
  if (!url.href.startsWith(`${endpoint(ctx, 'bluesky_tenor', TENOR)}/`)) return [];
  url.searchParams.delete('hh');
  url.searchParams.delete('ww');
  const source: SourceDraft = { url: url.href, stream_profile: 'image', mime_type: 'image/gif', ext: 'gif' };
  return [{ type: 'image', sources: [source], thumbnail: str(external?.thumb), title: str(external?.title) }];
}

/**
 * The quoted post of a record view. app.bsky.embed.record#view holds it as `record`;
 * recordWithMedia#view holds a record#view there, so it is one level deeper. A quoted post that is
 * deleted, blocked or a feed (viewNotFound, viewBlocked, generatorView) has no media.
 */
function quotedPost(view: Json | undefined): Json | undefined {
  let quoted = obj(view?.record);
  if (quoted && typeOf(quoted) !== 'app.bsky.embed.record#viewRecord') quoted = obj(quoted.record);
  return typeOf(quoted) === 'app.bsky.embed.record#viewRecord' ? quoted : undefined;
}

/**
 * The media of an embed view. `record` is the same embed in the post's raw record (it names the
 * video blob); `did` is the author whose PDS holds the blobs. Quotes nest at most twice.
 */
async function embedMedia(
  ctx: ExtractContext,
  view: Json | undefined,
  record: Json | undefined,
  did: string | undefined,
  depth = 0,
): Promise<MediaDraft[]> {
  if (!view || depth > 2) return [];
  switch (typeOf(view)) {
    case 'app.bsky.embed.video#view':
      return [await videoItem(ctx, view, record, did)];
    case 'app.bsky.embed.images#view':
      return imageItems(view);
    case 'app.bsky.embed.external#view':
      return gifItems(ctx, view);
    case 'app.bsky.embed.recordWithMedia#view': {
      const own = await embedMedia(ctx, obj(view.media), obj(record?.media), did, depth + 1);
      return own.length ? own : quotedMedia(ctx, quotedPost(view), depth);
    }
    case 'app.bsky.embed.record#view':
      return quotedMedia(ctx, quotedPost(view), depth);
    default:
      return [];
  }
}

/** yt-dlp's rule: a quoted post's media is its first embed. */
function quotedMedia(ctx: ExtractContext, quoted: Json | undefined, depth: number): Promise<MediaDraft[]> {
  if (!quoted) return Promise.resolve([]);
  return embedMedia(
    ctx,
    obj(arr(quoted.embeds)[0]),
    obj(obj(quoted.value)?.embed),
    str(obj(quoted.author)?.did),
    depth + 1,
  );
}

export const bluesky: UrlExtractor = {
  name: 'bluesky',
  platform: 'bluesky',
  patterns: BLUESKY_PATTERNS,
  kinds: ['video', 'image', 'gallery', 'gif', 'quote'],
  matches: (url) => blueskyPostUri(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const uri = blueskyPostUri(url);
    if (!uri) throw new ReelayError('invalid_url', 'This is not a Bluesky post URL.');
    const api = endpoint(ctx, 'bluesky_api', API);
    const answer = await getJson(
      ctx,
      `${api}/xrpc/app.bsky.feed.getPostThread?uri=${encodeURIComponent(uri)}&depth=0&parentHeight=0`,
    );
    const body = obj(answer.json);
    const thread = obj(body?.thread);
    if (answer.status !== 200 || !thread) throw threadError(answer, body);
    const threadType = typeOf(thread);
    if (threadType === 'app.bsky.feed.defs#notFoundPost' || thread.notFound === true) {
      throw new ReelayError('content_not_found', 'The Bluesky post was deleted or never existed.');
    }
    if (threadType === 'app.bsky.feed.defs#blockedPost' || thread.blocked === true) {
      throw new ReelayError('content_not_found', 'The Bluesky post is hidden by a block between accounts.');
    }
    const post = obj(thread.post);
    if (!post) throw new ReelayError('upstream_error', 'Bluesky answered with a thread that holds no post.');

    const author = obj(post.author);
    const record = obj(post.record);
    const media = await embedMedia(ctx, obj(post.embed), obj(record?.embed), str(author?.did));
    if (media.length === 0)
      throw new ReelayError(
        'no_media_found',
        'The Bluesky post has no video, image or GIF (links to other sites are not followed).',
      );
    const handle = str(author?.handle);
    return {
      url: url.href,
      platform: 'bluesky',
      extract_profile: 'bluesky_api',
      title: postTitle(str(record?.text)) ?? (handle ? `Bluesky post by @${handle}` : undefined),
      describing: {
        author: str(author?.displayName) ?? handle,
        upload_date: str(record?.createdAt),
        description: str(record?.text),
      },
      media,
    };
  },
};

// Profiles: bsky.app/profile/{handle or DID} lists the account's posts with video through the
// AppView's app.bsky.feed.getAuthorFeed (filter posts_with_video, 100 a page, the API's maximum),
// paged by its own cursor, which is the page state.
export const BLUESKY_PROFILE_PATTERNS: readonly RegExp[] = [
  /^https?:\/\/(?:www\.)?(?:bsky\.app|main\.bsky\.dev)\/profile\/([\w.:%-]{1,128})(?:\/(?:media|videos?))?\/?(?:[?#].*)?$/i,
];

export function blueskyProfileActor(url: URL): string | undefined {
  const m = BLUESKY_PROFILE_PATTERNS[0].exec(url.href);
  return m ? decodeURIComponent(m[1]) : undefined;
}

const VIDEO_VIEW = 'app.bsky.embed.video#view';

export const blueskyProfiles: UrlExtractor = {
  name: 'bluesky_profile',
  platform: 'bluesky',
  patterns: BLUESKY_PROFILE_PATTERNS,
  kinds: ['profile'],
  matches: (url) => blueskyProfileActor(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const actor = blueskyProfileActor(url);
    if (!actor) throw new ReelayError('invalid_url', 'This is not a Bluesky profile URL.');
    const cursor = stateToken(ctx.page?.state, /^[\w.:+=/-]{1,512}$/);
    const feed = new URL(`${endpoint(ctx, 'bluesky_api', API)}/xrpc/app.bsky.feed.getAuthorFeed`);
    feed.searchParams.set('actor', actor);
    feed.searchParams.set('filter', 'posts_with_video');
    feed.searchParams.set('limit', '100');
    if (cursor) feed.searchParams.set('cursor', cursor);
    const answer = await getJson(ctx, feed);
    const body = obj(answer.json);
    if (answer.status !== 200 || !Array.isArray(body?.feed)) {
      const error = str(body?.error);
      const message = str(body?.message);
      if (error === 'InvalidRequest' && /profile not found|resolve|not found/i.test(message ?? ''))
        throw new ReelayError('content_not_found', `Bluesky has no such profile (${message}).`);
      if (error === 'BlockedActor' || error === 'BlockedByActor')
        throw new ReelayError('content_not_found', 'The Bluesky profile is hidden by a block between accounts.');
      throw threadError(answer, body);
    }
    const rows = arr(body!.feed).slice(0, 100);
    const posts = rows.flatMap((row) => {
      const post = obj(obj(row)?.post);
      return post ? [post] : [];
    });
    const own = posts.map((p) => obj(p.author)).find((a) => a && (str(a.handle) === actor || str(a.did) === actor));
    const next = str(body!.cursor);
    return {
      url: url.href,
      platform: 'bluesky',
      extract_profile: 'bluesky_api',
      title: str(own?.displayName) ?? `@${str(own?.handle) ?? actor}`,
      media: [],
      // The AppView ends a feed by leaving out the cursor; a cursor with nothing before it ends it too.
      collection: {
        kind: 'profile',
        entries: posts.flatMap(postEntry),
        next: next && rows.length > 0 ? next : undefined,
      },
    };
  },
};

/** A post with a video (its own, or beside a quote) as an entry: its web URL, which the post extractor reads. */
function postEntry(post: Json): EntryDraft[] {
  const embed = obj(post.embed);
  const video =
    typeOf(embed) === VIDEO_VIEW ? embed : typeOf(obj(embed?.media)) === VIDEO_VIEW ? obj(embed?.media) : undefined;
  const uri = /^at:\/\/([^/]+)\/app\.bsky\.feed\.post\/([\w.~:-]{1,128})$/.exec(str(post.uri) ?? '');
  if (!video || !uri) return [];
  const author = obj(post.author);
  const who = str(author?.handle) ?? uri[1];
  const record = obj(post.record);
  return [
    {
      url: `https://bsky.app/profile/${encodeURIComponent(who)}/post/${uri[2]}`,
      id: uri[2],
      title: postTitle(str(record?.text)) ?? `Bluesky post by @${who}`,
      thumbnail: str(video.thumbnail),
      upload_date: str(record?.createdAt) ?? str(post.indexedAt),
    },
  ];
}
