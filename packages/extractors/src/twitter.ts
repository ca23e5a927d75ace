// Twitter (X) cards: twitter:player:stream is, by the card's definition, a raw stream (an MP4), so
// yt-dlp checks it before OpenGraph; twitter:player itself is an iframe page and is not media.
import { findSource, type Candidate } from './candidate.js';
import { toNumber } from './labels.js';
import { positiveInt } from './values.js';
import { metaFirst, type PageInfo } from './page.js';

export function twitterImage(page: PageInfo, base: URL): string | undefined {
  for (const key of ['twitter:image', 'twitter:image:src']) {
    const image = findSource(metaFirst(page, key), base, { declared: 'image' });
    if (image) return image.url;
  }
  return undefined;
}

export function twitterTitle(page: PageInfo): string | undefined {
  return metaFirst(page, 'twitter:title');
}

export function twitterCandidates(page: PageInfo, base: URL): Candidate[] {
  const type = metaFirst(page, 'twitter:player:stream:content_type');
  const source = findSource(metaFirst(page, 'twitter:player:stream'), base, {
    type,
    declared: type?.trim().toLowerCase().startsWith('audio/') ? 'audio' : 'video',
    width: positiveInt(toNumber(metaFirst(page, 'twitter:player:width'))),
    height: positiveInt(toNumber(metaFirst(page, 'twitter:player:height'))),
  });
  if (!source) return [];
  return [{ method: 'twitter_card', type: source.kind, sources: [source], thumbnail: twitterImage(page, base) }];
}
