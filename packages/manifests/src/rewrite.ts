// What a job's proxy changes in a manifest before ffmpeg reads it: the authority of its https
// references (to the worker's stand-in http names, which it passes in), and a DASH manifest's subtitle
// adaptation sets. Edits on the text, leaving every other byte as it was: nothing is parsed and
// written back, so paths, queries and templates (`$Number%05d$`) stay exactly as the origin wrote them.

// An authority ends at the first '/', '?', '#', whitespace, quote or angle bracket (both formats
// quote attribute values and XML ends element text with '<').
const ABSOLUTE_HTTPS = /https:\/\/([^/?#\s"'<>]+)/gi;
// A scheme-relative reference `//host/path` at the start of a playlist line, an attribute value or
// an element's text.
const SCHEME_RELATIVE = /(^|["'>])\/\/([^/?#\s"'<>]+)/gm;

/** The http host that stands in for an https one (`port` empty for the default). */
export type StandIn = (hostname: string, port: string) => string;

/**
 * Rewrites the authority of every absolute https reference, and of scheme-relative ones when the
 * manifest itself came over https (ffmpeg would resolve those against the stand-in's http), leaving
 * paths, queries and DASH templates (`$Number%05d$`) byte for byte as they were.
 */
export function rewriteHttpsReferences(text: string, manifestUrl: URL, standIn: StandIn): string {
  const out = text.replace(ABSOLUTE_HTTPS, (whole: string, authority: string) => {
    const mapped = mapAuthority(authority, standIn);
    return mapped === undefined ? whole : `http://${mapped}`;
  });
  if (manifestUrl.protocol !== 'https:') return out;
  return out.replace(SCHEME_RELATIVE, (whole: string, before: string, authority: string) => {
    const mapped = mapAuthority(authority, standIn);
    return mapped === undefined ? whole : `${before}http://${mapped}`;
  });
}

function mapAuthority(authority: string, standIn: StandIn): string | undefined {
  let url: URL;
  try {
    url = new URL(`https://${authority}/`);
  } catch {
    return undefined; // not a URL: left as it is, and ffmpeg will not be able to fetch it either
  }
  return standIn(url.hostname, url.port);
}

// A text adaptation set names its kind on the set or on every representation (contentType, mimeType
// or codecs); a set is never nested in another, so the first closing tag ends it.
const ADAPTATION_SET = /<((?:[\w.-]+:)?AdaptationSet)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1\s*>)/g;
const REPRESENTATION_TAG = /<(?:[\w.-]+:)?Representation\b[^>]*>/g;
const TEXT_KIND =
  /\b(?:contentType\s*=\s*["']text["']|mimeType\s*=\s*["'](?:text\/[^"']*|application\/ttml\+xml)["']|codecs\s*=\s*["'](?:wvtt|stpp)[^"']*["'])/i;

/**
 * A DASH manifest without its subtitle adaptation sets. ffmpeg's DASH demuxer opens every set, and
 * fails the whole input on a sidecar WebVTT, SRT or TTML file its demuxer list does not admit (and it
 * has no TTML demuxer at all); a job reads subtitle tracks as inputs of their own instead.
 */
export function withoutTextSets(text: string): string {
  return text.replace(ADAPTATION_SET, (whole: string, _name: string, attrs: string, body: string | undefined) => {
    if (TEXT_KIND.test(attrs)) return '';
    const reps = body?.match(REPRESENTATION_TAG) ?? [];
    return reps.length > 0 && reps.every((r) => TEXT_KIND.test(r)) ? '' : whole;
  });
}
