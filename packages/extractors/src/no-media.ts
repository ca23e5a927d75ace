// The no_media_found answer for "nothing anywhere": it names every place reelay looked, so a page
// without media does not read as if yt-dlp (the last one asked) were the only one that looked.
// Errors that say something more precise (DRM, a manifest with no variants) are left as they are.
import { ReelayError } from '@reelay/contracts';

const LOOKED_FOR = [
  'a media file',
  'OpenGraph, Twitter card and JSON-LD tags',
  'HTML5 media elements',
  'HLS/DASH manifests',
];

// The errors that mean "nothing found", as opposed to a more precise no_media_found.
const nothing = new WeakSet<Error>();

/** "No video, audio or image found at this URL: looked for …", with `also` (the fallback) last. */
export function nothingFound(also: string[] = []): ReelayError {
  const places = [...LOOKED_FOR, ...also];
  const list = places.length > 1 ? `${places.slice(0, -1).join(', ')}, and ${places.at(-1)}` : places[0];
  return markNothingFound(
    new ReelayError('no_media_found', `No video, audio or image found at this URL: looked for ${list}.`),
  );
}

/** Marks a fallback's own "found nothing" so the registry can fold it into nothingFound(). */
export function markNothingFound(err: ReelayError): ReelayError {
  nothing.add(err);
  return err;
}

export function isNothingFound(err: unknown): boolean {
  return err instanceof Error && nothing.has(err);
}
