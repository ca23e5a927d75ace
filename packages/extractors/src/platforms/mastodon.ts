// Mastodon and the servers that speak its client API (Pleroma, Akkoma, GoToSocial): a status's
// media attachments through GET /api/v1/statuses/{id} of the instance in the URL. Video, gifv (a
// silent looping MP4), audio and images are one progressive file each; a boost takes the boosted
// status's media.
//
// Any host can be an instance, so matches() looks only at the path and asks for a status id of the
// shapes below; a host whose API does not answer like Mastodon (an HTML page, JSON of another kind)
// is declined with NotMyUrl and the registry goes on to the generic extractors.
//
// Endpoints: none. The instance is the URL's own origin (a status id belongs to that instance).
// Download headers: none; media sits on the instance or its object storage.
import { ReelayError } from '@reelay/contracts';
import { mimeOfExt } from '../media-types.js';
import { NotMyUrl } from '../registry.js';
import { stateToken } from '../collection.js';
import type { EntryDraft, MediaDraft, ResultDraft, SourceDraft, UrlExtractor } from '../types.js';
import {
  arr,
  extOf,
  frameRate,
  getJson,
  htmlText,
  num,
  obj,
  postTitle,
  rateLimited,
  str,
  type Json,
} from './public-api.js';

const HOST = String.raw`https?:\/\/[^/?#@]+`;
const USER = String.raw`[\w.-]{1,64}`;
const END = String.raw`\/?(?:[?#].*)?$`;

/** Status URLs on any host. Mastodon ids are numeric; Pleroma and GoToSocial use alphanumeric ones. */
export const MASTODON_PATTERNS: readonly RegExp[] = [
  // /@user/{id}, and /@user@remote.host/{id} for a remote status shown by this instance; its /embed
  // iframe; the older web app's /web/@user/{id}.
  new RegExp(`^${HOST}\\/(?:web\\/)?@${USER}(?:@[\\w.-]{1,253})?\\/(\\d{1,20})(?:\\/embed)?${END}`, 'i'),
  // The ActivityPub URI, and the older web app's /web/statuses/{id}.
  new RegExp(`^${HOST}\\/users\\/${USER}\\/statuses\\/(\\d{1,20})${END}`, 'i'),
  new RegExp(`^${HOST}\\/web\\/statuses\\/(\\d{1,20})${END}`, 'i'),
  // Pleroma and Akkoma.
  new RegExp(`^${HOST}\\/notice\\/([A-Za-z0-9]{1,40})${END}`),
  // GoToSocial.
  new RegExp(`^${HOST}\\/@${USER}\\/statuses\\/([A-Za-z0-9]{1,40})${END}`, 'i'),
];

/** URL shapes and the API request each leads to (null: not a status URL). The tests check every line. */
export const MASTODON_URL_CASES: readonly (readonly [string, string | null])[] = [
  ['https://mastodon.social/@Gargron/109273938104512001', 'https://mastodon.social/api/v1/statuses/109273938104512001'],
  [
    'https://mastodon.social/@Gargron/109273938104512001/',
    'https://mastodon.social/api/v1/statuses/109273938104512001',
  ],
  [
    'https://fosstodon.org/@alice@mastodon.social/109273938104512001?lang=en',
    'https://fosstodon.org/api/v1/statuses/109273938104512001',
  ],
  [
    'https://mastodon.social/users/Gargron/statuses/109273938104512001',
    'https://mastodon.social/api/v1/statuses/109273938104512001',
  ],
  ['https://pleroma.example/notice/AbCdEf123456', 'https://pleroma.example/api/v1/statuses/AbCdEf123456'],
  [
    'https://gts.example/@bob/statuses/01HQ2Z3Y4X5W6V7U8T9S0R1Q2P',
    'https://gts.example/api/v1/statuses/01HQ2Z3Y4X5W6V7U8T9S0R1Q2P',
  ],
  ['http://127.0.0.1:8080/@carol/42', 'http://127.0.0.1:8080/api/v1/statuses/42'],
  ['https://mastodon.social/@Gargron', null],
  ['https://mastodon.social/@Gargron/with_replies', null],
  [
    'https://mastodon.social/@Gargron/109273938104512001/embed',
    'https://mastodon.social/api/v1/statuses/109273938104512001',
  ],
  [
    'https://mastodon.social/web/@Gargron/109273938104512001',
    'https://mastodon.social/api/v1/statuses/109273938104512001',
  ],
  [
    'https://mastodon.social/web/statuses/109273938104512001',
    'https://mastodon.social/api/v1/statuses/109273938104512001',
  ],
  ['https://mastodon.social/@Gargron/109273938104512001/reblogs', null],
  ['https://mastodon.social/web/statuses/', null],
  ['https://www.tiktok.com/@someone/video/7300000000000000000', null],
  ['https://medium.com/@writer/a-title-1a2b3c4d5e6f', null],
  ['https://mastodon.social/users/Gargron', null],
  ['https://example.com/notice/../../etc', null],
];

/** The API URL of the status a URL names, or undefined. */
export function mastodonStatusApi(url: URL): string | undefined {
  for (const pattern of MASTODON_PATTERNS) {
    const m = pattern.exec(url.href);
    if (m) return `${url.origin}/api/v1/statuses/${m[1]}`;
  }
  return undefined;
}

const isStatus = (v: Json | undefined): v is Json =>
  Boolean(v && (typeof v.id === 'string' || typeof v.id === 'number') && Array.isArray(v.media_attachments));

/** Mapping of one MediaAttachment; `unknown` attachments (files the instance could not process) are left out. */
function attachmentItem(attachment: Json): MediaDraft | undefined {
  const type = str(attachment.type);
  // url is the instance's copy; remote_url the origin server's, used when the instance has none.
  const url = str(attachment.url) ?? str(attachment.remote_url);
  if (!url || !URL.canParse(url) || !type) return undefined;
  const meta = obj(attachment.meta);
  const original = obj(meta?.original);
  const ext = extOf(url) || undefined;
  const base: Pick<SourceDraft, 'url' | 'ext' | 'width' | 'height'> = {
    url,
    ext,
    width: num(original?.width ?? meta?.width),
    height: num(original?.height ?? meta?.height),
  };
  const thumbnail = str(attachment.preview_url);
  const title = str(attachment.description);
  const duration = num(original?.duration ?? meta?.duration);
  const bitrate = num(original?.bitrate);
  switch (type) {
    case 'video':
    case 'gifv': {
      const source: SourceDraft = {
        ...base,
        stream_profile: 'muxed_progressive',
        mime_type: ext === 'webm' ? 'video/webm' : 'video/mp4',
        bitrate,
        fps: frameRate(original?.frame_rate ?? meta?.fps),
        has_video: true,
      };
      // A gifv is a GIF converted to a looping MP4 without sound.
      if (type === 'gifv') source.has_audio = false;
      return { type: 'video', sources: [source], thumbnail, title, duration };
    }
    case 'audio': {
      const source: SourceDraft = {
        url,
        ext,
        stream_profile: 'audio_only',
        mime_type: ext && mimeOfExt(ext, 'audio'),
        bitrate,
        has_audio: true,
        has_video: false,
      };
      return { type: 'audio', sources: [source], thumbnail, title, duration };
    }
    case 'image':
      return {
        type: 'image',
        sources: [{ ...base, stream_profile: 'image', mime_type: ext && mimeOfExt(ext) }],
        thumbnail,
        title,
      };
    default:
      return undefined;
  }
}

export const mastodon: UrlExtractor = {
  name: 'mastodon',
  platform: 'mastodon',
  patterns: MASTODON_PATTERNS,
  kinds: ['video', 'gif', 'audio', 'image', 'gallery'],
  matches: (url) => mastodonStatusApi(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const api = mastodonStatusApi(url);
    if (!api) throw new NotMyUrl('mastodon', 'not a status URL');
    const answer = await getJson(ctx, api);
    // A rate limit is one whatever the body says (often a proxy's page rather than JSON).
    if (answer.status === 429) throw rateLimited('The instance');
    const body = obj(answer.json);
    if (answer.status === 200 && isStatus(body)) return mapStatus(url, body);
    // Mastodon explains failures as {"error": "..."}; anything else is not a Mastodon API.
    const error = str(body?.error);
    if (!error || answer.status < 400)
      throw new NotMyUrl(
        'mastodon',
        `${api} answered ${answer.status} ${answer.contentType || 'without a type'}, not a Mastodon status`,
      );
    // Private and followers-only statuses are 404 to an anonymous caller, like deleted ones.
    if (answer.status === 404 || answer.status === 410)
      throw new ReelayError('content_not_found', `The status was deleted, is not public, or never existed (${error}).`);
    if (answer.status === 401 || answer.status === 403)
      throw new ReelayError('upstream_error', `The instance refuses anonymous API access (${error}).`);
    throw new ReelayError('upstream_error', `The instance answered with HTTP ${answer.status} (${error}).`);
  },
};

function mapStatus(url: URL, status: Json): ResultDraft {
  // A boost carries the boosted status, with the media, in `reblog`.
  const reblog = obj(status.reblog);
  const shown = isStatus(reblog) ? reblog : status;
  const media = arr(shown.media_attachments).flatMap((entry) => {
    const attachment = obj(entry);
    const item = attachment && attachmentItem(attachment);
    return item ? [item] : [];
  });
  if (media.length === 0)
    throw new ReelayError('no_media_found', 'The status has no video, audio or image attachments.');
  const account = obj(shown.account);
  const text = str(shown.spoiler_text) ?? htmlText(str(shown.content));
  const acct = str(account?.acct);
  return {
    url: url.href,
    platform: 'mastodon',
    extract_profile: 'mastodon_api',
    title: postTitle(text) ?? (acct ? `Post by @${acct}` : undefined),
    describing: {
      author: str(account?.display_name) ?? acct,
      upload_date: str(shown.created_at),
      description: htmlText(str(shown.content)),
    },
    media,
  };
}

// Profiles: /@user (and /@user@remote.host, /users/user) lists the account's posts with video or
// audio, through GET /api/v1/accounts/lookup?acct= and /api/v1/accounts/{id}/statuses?only_media=true,
// newest first, paged by max_id (40 a page, the API's maximum). The page state is
// "{account id}:{max_id}", so a later page needs no second lookup.
export const MASTODON_PROFILE_PATTERNS: readonly RegExp[] = [
  new RegExp(`^${HOST}\\/@(${USER}(?:@[\\w.-]{1,253})?)(?:\\/(?:media|with_replies))?${END}`, 'i'),
  new RegExp(`^${HOST}\\/users\\/(${USER})${END}`, 'i'),
];

const PROFILE_PAGE = 40;
const MEDIA_TYPES = new Set(['video', 'gifv', 'audio']);

export function mastodonProfileAcct(url: URL): string | undefined {
  for (const pattern of MASTODON_PROFILE_PATTERNS) {
    const m = pattern.exec(url.href);
    if (m) return m[1];
  }
  return undefined;
}

export const mastodonProfiles: UrlExtractor = {
  name: 'mastodon_profile',
  platform: 'mastodon',
  patterns: MASTODON_PROFILE_PATTERNS,
  kinds: ['profile'],
  matches: (url) => mastodonProfileAcct(url) !== undefined,
  async extract(url, ctx): Promise<ResultDraft> {
    const acct = mastodonProfileAcct(url);
    if (!acct) throw new NotMyUrl('mastodon_profile', 'not a profile URL');
    const state = stateToken(ctx.page?.state, /^[A-Za-z0-9]{1,40}:[A-Za-z0-9]{1,40}$/);
    let accountId = state?.split(':')[0];
    let title: string | undefined;
    if (!accountId) {
      const lookup = new URL(`${url.origin}/api/v1/accounts/lookup`);
      lookup.searchParams.set('acct', acct);
      const answer = await getJson(ctx, lookup);
      if (answer.status === 429) throw rateLimited('The instance');
      const account = obj(answer.json);
      const id = account?.id;
      if (
        answer.status === 200 &&
        (typeof id === 'string' || typeof id === 'number') &&
        typeof account?.acct === 'string'
      ) {
        accountId = String(id);
        title = str(account.display_name) ?? `@${str(account.acct)}`;
      } else {
        const error = str(account?.error);
        if (!error || answer.status < 400)
          throw new NotMyUrl('mastodon_profile', `${lookup.href} answered ${answer.status}, not a Mastodon account`);
        if (answer.status === 404 || answer.status === 410)
          throw new ReelayError('content_not_found', `The account does not exist on this instance (${error}).`);
        throw new ReelayError(
          'upstream_error',
          `The instance refused the account lookup (${answer.status}: ${error}).`,
        );
      }
      if (!/^[A-Za-z0-9]{1,40}$/.test(accountId))
        throw new ReelayError('upstream_error', 'The instance answered with an account id of an unknown shape.');
    }
    const list = new URL(`${url.origin}/api/v1/accounts/${accountId}/statuses`);
    list.searchParams.set('only_media', 'true');
    list.searchParams.set('exclude_replies', 'true');
    list.searchParams.set('limit', String(PROFILE_PAGE));
    const maxId = state?.split(':')[1];
    if (maxId) list.searchParams.set('max_id', maxId);
    const answer = await getJson(ctx, list);
    if (answer.status === 429) throw rateLimited('The instance');
    if (answer.status >= 400 || !Array.isArray(answer.json)) {
      const error = str(obj(answer.json)?.error);
      if (answer.status === 404 || answer.status === 410)
        throw new ReelayError('content_not_found', `The account's posts are not public${error ? ` (${error})` : ''}.`);
      throw new ReelayError(
        'upstream_error',
        `The instance answered the account's posts with HTTP ${answer.status}${error ? ` (${error})` : ''}.`,
      );
    }
    const statuses = answer.json.slice(0, PROFILE_PAGE).flatMap((s) => (isStatus(obj(s)) ? [obj(s)!] : []));
    const last = statuses.at(-1)?.id;
    const lastId = last === undefined ? undefined : String(last);
    const more = answer.json.length >= PROFILE_PAGE && lastId !== undefined && /^[A-Za-z0-9]{1,40}$/.test(lastId);
    return {
      url: url.href,
      platform: 'mastodon',
      extract_profile: 'mastodon_api',
      title: title ?? `@${acct}`,
      media: [],
      collection: {
        kind: 'profile',
        entries: statuses.flatMap(statusEntry),
        next: more ? `${accountId}:${lastId}` : undefined,
      },
    };
  },
};

/** A status with video, gifv or audio as an entry (its web URL, which the status extractor reads). */
function statusEntry(status: Json): EntryDraft[] {
  const reblog = obj(status.reblog);
  const shown = isStatus(reblog) ? reblog : status;
  const attachment = arr(shown.media_attachments)
    .map(obj)
    .find((a) => a && MEDIA_TYPES.has(String(a.type)));
  const url = str(shown.url);
  if (!attachment || !url || !/^https?:\/\//i.test(url)) return [];
  const meta = obj(attachment.meta);
  const text = str(shown.spoiler_text) ?? htmlText(str(shown.content));
  return [
    {
      url,
      id: String(shown.id),
      title: postTitle(text) ?? str(attachment.description),
      duration: num(obj(meta?.original)?.duration ?? meta?.duration),
      thumbnail: str(attachment.preview_url),
      upload_date: str(shown.created_at),
    },
  ];
}
