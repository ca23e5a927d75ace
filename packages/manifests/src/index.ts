// The manifests package: the one reader of HLS playlists, DASH manifests and feeds, under one set of
// limits (limits.ts, xml.ts), for the extractors, a job's proxy and the recorder. No other package
// imports an XML or playlist parser (eslint.config.js holds them to it). Building XML (the feed the
// service serves as RSS, NFO files) belongs here too, beside the reading: fast-xml-parser's builder.
export {
  DEFAULT_MAX_SEGMENTS,
  MAX_FEED_ITEMS,
  MAX_LISTED,
  MAX_LIVE_MANIFEST_BYTES,
  MAX_MANIFEST_BYTES,
  MAX_XML_DEPTH,
  tooManySegments,
} from './limits.js';
export { refuseDtd, type XmlNode } from './xml.js';
export { isMaster, looksLikeFeed, looksLikeHls, looksLikeMpd, MANIFEST_SNIFF_BYTES, sniffManifest } from './sniff.js';
export { splitCodecs, type CodecParts } from './codecs.js';
export { isoDuration } from './values.js';

export { resolvePlaylistUri, sameResource, tagAttributes } from './hls-text.js';
export {
  checkHlsText,
  readHls,
  refuseSelfNaming,
  type Key,
  type MasterPlaylist,
  type MediaPlaylist,
  type Rendition,
  type Segment,
  type Variant,
} from './hls-read.js';
export {
  isLiveMediaPlaylist,
  parseLivePlaylist,
  type LiveMaster,
  type LivePlaylist,
  type LiveSegment,
} from './hls-live.js';

export { attr, baseOf, kids, readMpd, repKind, segmentCount, type Base, type Kind } from './mpd.js';
export {
  liveDashWindow,
  readLiveMpd,
  type LiveDashOptions,
  type LiveDashSegment,
  type LiveDashWindow,
  type LiveMpd,
} from './mpd-live.js';

export { dashSegments, hlsSegments, segmentsFrom, type PlannedSegment } from './segment-plan.js';
export { BASE_REQUESTS, ManifestLedger } from './ledger.js';
export { rewriteHttpsReferences, withoutTextSets, type StandIn } from './rewrite.js';

export { feedLink, readFeed, type FeedAttrs, type FeedDocument, type FeedItem } from './feed.js';
