// The extractors package: the registry, the generic extractors in the order they are tried, and the
// platform extractors.
import { dashManifest } from './dash.js';
import { directFile } from './direct.js';
import { feedDocument } from './feed.js';
import { hlsManifest } from './hls.js';
import { htmlPage } from './html.js';
import { ExtractorRegistry } from './registry.js';
import { bluesky, blueskyProfiles } from './platforms/bluesky.js';
import { dailymotion, dailymotionCollections } from './platforms/dailymotion.js';
import { mastodon, mastodonProfiles } from './platforms/mastodon.js';
import { peertube, peertubeCollections } from './platforms/peertube.js';
import { reddit, redditListings } from './platforms/reddit.js';
import { streamable } from './platforms/streamable.js';
import { vimeo } from './platforms/vimeo.js';
import { x } from './platforms/x.js';
import type { DocumentExtractor, UrlExtractor } from './types.js';
import { YtdlpBridge, type YtdlpOptions } from './ytdlp.js';

export * from './types.js';
export * from './registry.js';
export * from './result.js';
export * from './document.js';
export * from './manifest.js';
export { buildCollection, DEFAULT_MAX_COLLECTION_ENTRIES, MAX_COLLECTION_PAGES } from './collection.js';
export { parseFeed } from './feed-entries.js';
export { extOfMime, kindOfMime, mimeOfExt, HTML_TYPES, HLS_TYPES, DASH_TYPES } from './media-types.js';
export { YtdlpBridge, YTDLP_TIMEOUT_MS, hostListed, type YtdlpOptions } from './ytdlp.js';
export { mapYtdlpInfo } from './ytdlp-map.js';
/** X's syndication token for a post id (tests play the syndication endpoint and check it). */
export { syndicationToken } from './platforms/x.js';
export { locateYtdlp } from './ytdlp-process.js';

/** Tried in order on a fetched document: manifests first (they are text), then media files, then pages. */
export const GENERIC_EXTRACTORS: readonly DocumentExtractor[] = [
  hlsManifest,
  dashManifest,
  feedDocument,
  directFile,
  htmlPage,
];

/** Platform extractors, asked before anything is fetched. */
export const PLATFORM_EXTRACTORS: readonly UrlExtractor[] = [
  reddit,
  x,
  vimeo,
  bluesky,
  streamable,
  dailymotion,
  // Collections (playlists, channels, profiles) on the same platforms, after their single items.
  redditListings,
  blueskyProfiles,
  dailymotionCollections,
  // Any-host platforms claim URLs by path alone, so they come after every platform with its own
  // hosts; when their API says the host is not theirs, the registry moves on (NotMyUrl).
  mastodon,
  peertube,
  mastodonProfiles,
  peertubeCollections,
];

export interface RegistryOptions {
  /** The yt-dlp bridge; without it nothing is handed to yt-dlp. */
  ytdlp?: YtdlpOptions;
}

export function createRegistry(options: RegistryOptions = {}): ExtractorRegistry {
  return new ExtractorRegistry(
    PLATFORM_EXTRACTORS,
    GENERIC_EXTRACTORS,
    options.ytdlp ? new YtdlpBridge(options.ytdlp) : undefined,
  );
}
