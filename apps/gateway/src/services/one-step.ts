// One-step downloads: a page_url request becomes the download of the source or pair that the shared
// chooseSource picks, after an extract through the same cache, guard and limits as POST /extract.
import {
  chooseSource,
  describePick,
  ReelayError,
  type ChosenSource,
  type DownloadRequest,
  type ExtractResult,
} from '@reelay/contracts';
import type { ExtractService } from './extract.js';

export interface Resolved {
  /** The request as a download of the chosen source or pair, with this extract's extraction_id. */
  body: DownloadRequest;
  chosen: ChosenSource;
}

/** The item a request names, or 400 saying how many there are (or that a collection cannot be taken yet). */
export function itemOf(result: ExtractResult, index: number) {
  // Collections come with their own download (another branch); until then say so plainly.
  if ((result.content_type as string) === 'collection')
    throw new ReelayError(
      'invalid_request',
      'page_url names a collection (a playlist, channel or feed); collection downloads are not available yet: extract it and download its entries one by one.',
    );
  const item = result.media[index];
  if (!item) {
    const count = result.media.length;
    throw new ReelayError(
      'invalid_request',
      `item ${index} is out of range: this page has ${count} media item${count === 1 ? '' : 's'} (item 0${count > 1 ? `–${count - 1}` : ''}).`,
    );
  }
  return item;
}

/** Extracts body.page_url and turns the request into a download of what the preset chooses. */
export async function resolvePageUrl(
  extracts: ExtractService,
  body: DownloadRequest,
  options: { signal?: AbortSignal; fresh?: boolean; result?: ExtractResult } = {},
): Promise<Resolved> {
  const {
    page_url: pageUrl,
    item: index = 0,
    quality,
    audio_only: audioOnly,
    entries,
    bundle,
    archive,
    ...rest
  } = body;
  if (entries !== undefined || bundle !== undefined || archive !== undefined)
    throw new ReelayError(
      'invalid_request',
      'entries, bundle and archive are for a collection, and page_url names a single page.',
    );
  const result = options.result ?? (await extracts.extract(pageUrl!, options.signal, { fresh: options.fresh })).result;
  const item = itemOf(result, index);
  const choice = chooseSource(item, { quality, audio_only: audioOnly, format: body.format });
  if (choice.kind === 'none') {
    throw new ReelayError(
      'no_matching_source',
      `No source of item ${index} fits: ${choice.reason} It has: ${choice.available.join(', ')}.`,
    );
  }
  const urls =
    choice.kind === 'source'
      ? { url: choice.source.url }
      : { video_url: choice.video.url, audio_url: choice.audio.url };
  return {
    body: { ...rest, ...urls, extraction_id: result.extraction_id },
    chosen: { quality: choice.quality, ...urls, description: describePick(choice) },
  };
}
